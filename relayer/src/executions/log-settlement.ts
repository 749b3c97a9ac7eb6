// Whether an escrow was settled into its agent's receipt log. A receipt account proves a `settle`
// landed; a leaf leaves no account behind, so the proof is the transaction that closed the escrow:
// its EscrowSettledToLog event names the execution. Read only where the row and the chain could
// disagree (the finish job finding an escrow closed, the reconciliation), never on the hot path.
import { escrowPda, eventsFromInnerInstructions } from "@agent-market/program";
import type { Connection, PublicKey } from "@solana/web3.js";

/** The escrow's successful transactions read at most: its open, its close, and a few failed tries. */
const HISTORY_LIMIT = 20;

export async function settledInLog(connection: Connection, programId: PublicKey, executionId: Uint8Array): Promise<boolean> {
  const history = await connection.getSignaturesForAddress(escrowPda(executionId, programId), { limit: HISTORY_LIMIT }, "confirmed");
  for (const entry of history) {
    if (entry.err !== null) continue;
    const tx = await connection.getTransaction(entry.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
    if (!tx) continue;
    const settled = eventsFromInnerInstructions(tx, programId).some(
      (event) =>
        event.name === "EscrowSettledToLog" &&
        Buffer.from((event.data as { executionId: Uint8Array }).executionId).equals(Buffer.from(executionId)),
    );
    if (settled) return true;
  }
  return false;
}
