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
  title: string;
  detail: string;
  fix: string;
  /** The fix is made on the Wallet screen (funding it with SOL or USDC). */
  onWallet: boolean;
}

const AGAIN = "Try again in a moment.";

/**
 * The chain's texts by what they mean to a user, first match wins: the fee payer's SOL before the
 * token program's "insufficient funds", and a transaction that may still land apart from one that
 * can no longer land.
 */
const MEANINGS: [RegExp, ChainWords][] = [
  [
    /no record of a prior credit|insufficient funds for (fee|rent)|insufficient lamports/i,
    {
      title: "The wallet needs SOL for the network fee",
      detail: "The wallet has no SOL to pay the transaction's network fee.",
      fix: "Add SOL to the wallet for the network fee on the Wallet screen, then try again.",
      onWallet: true,
    },
  ],
  [
    /blockhash not found|block height exceeded|has expired/i,
    {
      title: "The transaction expired",
      detail: "The transaction expired before the chain accepted it; nothing was taken.",
      fix: "Try again: a new transaction is prepared each time.",
      onWallet: false,
    },
  ],
  [
    /not confirmed (within|in) /i,
    {
      title: "Not confirmed in time",
      detail: "The chain did not confirm the transaction in time: it may still go through.",
      fix: "Look again in a moment (Refresh) before trying it again, so that nothing is done twice.",
      onWallet: false,
    },
  ],
  [
    /node is (behind|unhealthy)|behind by \d+ slots/i,
    {
      title: "The chain's RPC node is catching up",
      detail: "The chain's RPC node has not caught up with the chain; nothing was sent.",
      fix: AGAIN,
      onWallet: false,
    },
  ],
  [
    /failed to fetch|fetch failed|networkerror|network request failed|ECONNREFUSED|ERR_CONNECTION|HTTP 5\d\d|\b50[234] [A-Z]|service unavailable|bad gateway|gateway timeout|too many requests|\b429\b/i,
    {
      title: "The chain could not be reached",
      detail: "The chain's RPC did not answer: it may be stopped or busy, or this computer is offline. Nothing was sent.",
      fix: "Check your connection (on your own machine: that npm start is still running), then try again.",
      onWallet: false,
    },
  ],
  [
    /insufficient funds/i,
    {
      title: "Not enough USDC",
      detail: "The wallet's USDC account holds less than this transaction moves: it did not take effect.",
      fix: "Add USDC to the wallet on the Wallet screen, or move less, then try again.",
      onWallet: true,
    },
  ],
];

const REFUSED: ChainWords = { title: "The chain refused", detail: "The chain refused the transaction: it did not take effect.", fix: AGAIN, onWallet: false };

export function chainErrorWords(raw: string): ChainWords {
  return MEANINGS.find(([pattern]) => pattern.test(raw))?.[1] ?? REFUSED;
}

/** Errors thrown by web3.js or an RPC that are not the dashboard's own words. */
export function isRawRpcText(message: string): boolean {
  return /simulation failed|failed to (get|send) |custom program error|JSON-RPC|prior credit|blockhash|block height exceeded|not confirmed (in|within) |node is behind|Transaction .* (failed|resulted)|0x[0-9a-f]+|insufficient (funds|lamports)|Invalid param|Program log:|\b50[234] [A-Z]|429 Too Many/i.test(
    message,
  );
}
