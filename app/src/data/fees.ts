// Every wallet action pays a network fee in SOL: checked before the wallet is asked to sign, so a
// wallet with none is told how to get some instead of meeting the chain's refusal.
import { rpc } from "../wallet/rpc.js";
import { NeedsSolError } from "./chain-errors.js";

/** Enough for a few dozen fees, and for the rent of a USDC account the transaction may create. */
export const MIN_FEE_LAMPORTS = 3_000_000n;

export async function solBalance(rpcUrl: string, address: string): Promise<bigint> {
  const { value } = await rpc<{ value: number }>(rpcUrl, "getBalance", [address, { commitment: "confirmed" }]);
  return BigInt(value);
}

/** Throws NeedsSolError when `address` cannot pay a fee; without an RPC address the wallet checks. */
export async function requireFeeSol(rpcUrl: string | null, address: string, localnet: boolean): Promise<void> {
  if (rpcUrl === null) return;
  const lamports = await solBalance(rpcUrl, address);
  if (lamports < MIN_FEE_LAMPORTS) throw new NeedsSolError(lamports, localnet);
}
