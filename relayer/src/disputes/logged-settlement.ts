// When an execution settled by settle_batch was settled, by the chain's clock. It has no receipt
// account to read: its leaf's `settled_at` travels in the EscrowSettledToLog event of its
// settlement transaction, which the relayer sent and recorded, and open_dispute_from_log counts
// the dispute window from that very field.
import { eventsFromInnerInstructions, type EventData } from "@agent-market/program";
import type { Connection, PublicKey } from "@solana/web3.js";

/** The leaf's `settled_at` (unix seconds) in `signature`'s EscrowSettledToLog for `executionId`; null if it has none. */
export async function loggedSettledAt(connection: Connection, programId: PublicKey, signature: string, executionId: Uint8Array): Promise<bigint | null> {
  const tx = await connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
  if (!tx) return null;
  const wanted = Buffer.from(executionId);
  for (const event of eventsFromInnerInstructions(tx, programId)) {
    if (event.name !== "EscrowSettledToLog") continue;
    const data = event.data as EventData<"EscrowSettledToLog">;
    if (wanted.equals(Buffer.from(data.executionId))) return data.settledAt;
  }
  return null;
}
