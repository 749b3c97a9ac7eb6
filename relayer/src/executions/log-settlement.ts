// An escrow settled into its agent's receipt log. A receipt account proves a `settle` landed and
// holds its settlement time; a leaf leaves no account behind, so both are read from the
// transaction that closed the escrow, whose EscrowSettledToLog event names the execution and its
// leaf's `settled_at` (from which open_dispute_from_log counts the dispute window). Read only
// where the row and the chain could disagree (the finish job finding an escrow closed, the
// reconciliation) and for dispute evidence, never on the execution path.
import { escrowPda, eventsFromInnerInstructions, type EventData } from "@agent-market/program";
import type { Connection, PublicKey } from "@solana/web3.js";

/** The escrow's transactions read at most: its open, its close, and a few failed tries. */
const HISTORY_LIMIT = 20;

/** `executionId`'s EscrowSettledToLog in transaction `signature`; null if it has none. */
async function settledToLog(
  connection: Connection,
  programId: PublicKey,
  signature: string,
  executionId: Uint8Array,
): Promise<EventData<"EscrowSettledToLog"> | null> {
  const tx = await connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
  if (!tx) return null;
  const wanted = Buffer.from(executionId);
  for (const event of eventsFromInnerInstructions(tx, programId)) {
    if (event.name !== "EscrowSettledToLog") continue;
    const data = event.data as EventData<"EscrowSettledToLog">;
    if (wanted.equals(Buffer.from(data.executionId))) return data;
  }
  return null;
}

/** Whether a transaction that touched the escrow settled it into the receipt log. */
export async function settledInLog(connection: Connection, programId: PublicKey, executionId: Uint8Array): Promise<boolean> {
  const history = await connection.getSignaturesForAddress(escrowPda(executionId, programId), { limit: HISTORY_LIMIT }, "confirmed");
  for (const entry of history) {
    if (entry.err === null && (await settledToLog(connection, programId, entry.signature, executionId))) return true;
  }
  return false;
}

/** The leaf's `settled_at` (unix seconds) in settlement transaction `signature`; null if it has none. */
export async function loggedSettledAt(connection: Connection, programId: PublicKey, signature: string, executionId: Uint8Array): Promise<bigint | null> {
  return (await settledToLog(connection, programId, signature, executionId))?.settledAt ?? null;
}
