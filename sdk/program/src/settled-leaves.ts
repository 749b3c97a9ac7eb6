// The executions a settlement batch settled, one record each, from the batch's one
// `EscrowsSettledToLog` event: its leaves, each with the batch's agent, root and settlement time,
// its own index in the agent's receipt log and the split of its charge (which the program computes
// and does not repeat in the event).
import type { PublicKey } from "@solana/web3.js";

import { eventsFromInnerInstructions, type TransactionWithInnerInstructions } from "./events.js";
import { splitPayment } from "./program.js";
import type { AgentMarketEvent, EventData, ReceiptLeaf } from "./types.js";

export type SettledLeaf = ReceiptLeaf & {
  agent: PublicKey;
  leafIndex: bigint;
  logRoot: Uint8Array;
  /** The log also keeps `logRoot` as a checkpoint: a proof to it outlives 64 batches (docs/program.md). */
  checkpoint: boolean;
  creatorShareUsdc: bigint;
  feeUsdc: bigint;
};

/** The leaves of one batch's event, in log order. */
export function leavesOfBatch(event: EventData<"EscrowsSettledToLog">): SettledLeaf[] {
  return event.leaves.map((leaf, offset) => ({
    ...leaf,
    agent: event.agent,
    leafIndex: event.firstLeafIndex + BigInt(offset),
    logRoot: event.logRoot,
    checkpoint: event.checkpoint,
    ...splitPayment(leaf.chargedUsdc),
  }));
}

/** The settled leaves among `events`, in order. */
export function settledLeaves(events: readonly AgentMarketEvent[]): SettledLeaf[] {
  return events.flatMap((event) => (event.name === "EscrowsSettledToLog" ? leavesOfBatch(event.data) : []));
}

/** The leaves a transaction's settlement batches settled, from their events. */
export function settledLeavesOfTransaction(tx: TransactionWithInnerInstructions, programId: PublicKey): SettledLeaf[] {
  return settledLeaves(eventsFromInnerInstructions(tx, programId));
}
