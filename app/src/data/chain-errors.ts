// What the chain's RPC says, in the dashboard's words. An RPC's own text ("Transaction simulation
// failed: Attempt to debit an account but found no record of a prior credit") means nothing to a
// user: each refusal the dashboard can meet is named with what to do, and no raw text is shown.

/** A transaction or read the chain's RPC refused; `raw` is its text, kept for the console only. */
export class ChainError extends Error {
  constructor(readonly raw: string) {
    super(chainErrorWords(raw).detail);
    this.name = "ChainError";
  }
}

/** The wallet holds too little SOL for a transaction's network fee (checked before signing). */
export class NeedsSolError extends Error {
  constructor(
    readonly lamports: bigint,
    readonly localnet: boolean,
  ) {
    super(`This wallet holds ${formatSol(lamports)} SOL: every transaction pays a network fee in SOL, so nothing was signed or sent.`);
    this.name = "NeedsSolError";
  }
}

export function formatSol(lamports: bigint): string {
  const whole = lamports / 1_000_000_000n;
  const fraction = (lamports % 1_000_000_000n).toString().padStart(9, "0").replace(/0+$/, "");
  return fraction === "" ? whole.toString() : `${whole}.${fraction}`;
}

export interface ChainWords {
  detail: string;
  /** The wallet lacks SOL: the fix is to fund it. */
  needsSol: boolean;
}

export function chainErrorWords(raw: string): ChainWords {
  if (/no record of a prior credit|insufficient funds for (fee|rent)|insufficient lamports/i.test(raw)) {
    return { detail: "The wallet has no SOL to pay the transaction's network fee.", needsSol: true };
  }
  if (/blockhash not found|block height exceeded|has expired|not confirmed within/i.test(raw)) {
    return { detail: "The transaction expired before the chain confirmed it; nothing was taken.", needsSol: false };
  }
  if (/insufficient funds/i.test(raw)) return { detail: "The wallet's USDC account holds less than this transaction moves.", needsSol: false };
  if (/failed to fetch|network|ECONNREFUSED|fetch failed/i.test(raw)) return { detail: "The chain could not be reached.", needsSol: false };
  return { detail: "The chain refused the transaction.", needsSol: false };
}

/** Errors thrown by web3.js or an RPC that are not the dashboard's own words. */
export function isRawRpcText(message: string): boolean {
  return /simulation failed|failed to (get|send)|custom program error|JSON-RPC|prior credit|blockhash|Transaction .* (failed|resulted)|0x[0-9a-f]+|insufficient (funds|lamports)|Invalid param/i.test(message);
}
