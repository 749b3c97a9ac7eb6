// An escrow settled into its agent's receipt log leaves no account behind: that it settled, its
// leaf's `settled_at` (from which open_dispute counts the dispute window) and its leaf index (by
// which its dispute is keyed) are read from the transaction that closed the escrow, whose batch's
// EscrowsSettledToLog event carries its leaf, naming the escrow by execution id and nonce (an id
// may be opened again, as another escrow with another nonce). Read only where the row and the chain could disagree
// (the finish job finding an escrow closed, the reconciliation) and for disputes, never on the
// execution path.
import { escrowPda, settledLeavesOfTransaction, type SettledLeaf } from "@agent-market/program";
import type { Connection, PublicKey } from "@solana/web3.js";

/** The escrow's transactions read at most: its open, its close, and a few failed tries. */
const HISTORY_LIMIT = 20;

/** The escrow an event must name: its execution id and nonce. */
export interface EscrowKey {
  executionId: Uint8Array;
  nonce: bigint;
}

/** The escrow's leaf among those transaction `signature` settled; null if it has none. */
export async function settledToLog(connection: Connection, programId: PublicKey, signature: string, escrow: EscrowKey): Promise<SettledLeaf | null> {
  const tx = await connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
  if (!tx) return null;
  const wanted = Buffer.from(escrow.executionId);
  return settledLeavesOfTransaction(tx, programId).find((leaf) => wanted.equals(Buffer.from(leaf.executionId)) && leaf.nonce === escrow.nonce) ?? null;
}

/** Whether a transaction that touched the escrow settled it into the receipt log. */
export async function settledInLog(connection: Connection, programId: PublicKey, escrow: EscrowKey): Promise<boolean> {
  const history = await connection.getSignaturesForAddress(escrowPda(escrow.executionId, programId), { limit: HISTORY_LIMIT }, "confirmed");
  for (const entry of history) {
    if (entry.err === null && (await settledToLog(connection, programId, entry.signature, escrow))) return true;
  }
  return false;
}
