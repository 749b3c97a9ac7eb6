// A disputed leaf's row, rebuilt from its stored DisputeOpened, DisputeResolved and DisputeClosed
// events (all keyed by agent and leaf index): the same function of the same set whatever order
// they arrived in, as an execution's row is.
import type { Commitment } from "./event-row.js";
import type { DisputeState, EventRecord } from "./execution-view.js";

export const DISPUTE_EVENTS: readonly string[] = ["DisputeOpened", "DisputeResolved", "DisputeClosed"];

export interface DisputeRow {
  agent: string;
  leaf_index: string;
  execution_id: string;
  payer: string;
  state: DisputeState;
  amount_usdc: string;
  evidence_hash: string;
  opened_at: number;
  resolved_at: number | null;
  slashed_usdc: string;
  closed: boolean;
  closed_at: number | null;
  max_slot: number;
  commitment: Commitment;
}

/** A disputed leaf's key: `agent:leafIndex`. */
export function disputeKey(agent: string, leafIndex: string): string {
  return `${agent}:${leafIndex}`;
}

/** The dispute its events describe, or null without its opening (none stored, or dropped). */
export function disputeFromEvents(events: readonly EventRecord[]): DisputeRow | null {
  const opened = events.find((event) => event.name === "DisputeOpened");
  if (!opened) return null;
  const data = opened.data;
  const row: DisputeRow = {
    agent: String(data.agent),
    leaf_index: String(data.leafIndex),
    execution_id: String(data.executionId),
    payer: String(data.payer),
    state: "open",
    amount_usdc: String(data.amountUsdc),
    evidence_hash: String(data.evidenceHash),
    opened_at: Number(data.openedAt),
    resolved_at: null,
    slashed_usdc: "0",
    closed: false,
    closed_at: null,
    max_slot: 0,
    commitment: "finalized",
  };
  for (const event of events) {
    row.max_slot = Math.max(row.max_slot, event.slot);
    if (event.commitment === "confirmed") row.commitment = "confirmed";
    if (event.name === "DisputeResolved") {
      row.state = event.data.upheld === true ? "upheld" : "rejected";
      row.slashed_usdc = String(event.data.slashedUsdc);
      row.resolved_at = Number(event.data.resolvedAt);
    }
    if (event.name === "DisputeClosed") {
      row.closed = true;
      row.closed_at = event.block_time;
    }
  }
  return row;
}
