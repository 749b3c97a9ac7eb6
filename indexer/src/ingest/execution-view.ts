// An execution's row, rebuilt from all its stored events: whatever order they arrived in, the
// row is the same function of the same set, so a duplicate, a late open or a dropped settle
// all end in the right row. Its receipt log leaves and disputes are kept by (agent, leaf index)
// apart from it (receipt-leaf.ts, dispute-view.ts): an id opened again settles into another leaf.
import type { Commitment, JsonValue } from "./event-row.js";

export type ExecutionState = "open" | "settled" | "refunded" | "reclaimed";
export type DisputeState = "open" | "upheld" | "rejected";

/** An event as read back from the events table. */
export interface EventRecord {
  signature: string;
  slot: number;
  block_time: number | null;
  commitment: Commitment;
  name: string;
  execution_id: string | null;
  agent: string | null;
  fee_shard: number | null;
  data: Record<string, JsonValue>;
}

export interface ExecutionRow {
  id: string;
  agent: string;
  payer: string;
  api_key_id: string | null;
  creator: string | null;
  state: ExecutionState;
  refund_reason: string | null;
  /** What the escrow held: a fixed-price call's price, or the most a metered call may cost. */
  amount_usdc: string;
  /** "0" for a fixed-price call, as the program records it. */
  price_per_unit_usdc: string;
  /** "0" for a fixed-price call. */
  max_units: string;
  /** The units the creator signed; null until settled. */
  units: string | null;
  /** What the settlement charged, the amount the split and the rollups count; null while open. */
  charged_usdc: string | null;
  /** What went back to the payer, in the settlement or by refund or reclaim; null while open. */
  returned_usdc: string | null;
  /** The creator's and the marketplace's split of the charge. */
  creator_share_usdc: string;
  fee_usdc: string;
  fee_shard: number | null;
  used_included_call: boolean | null;
  opened_at: number | null;
  deadline: number | null;
  closed_at: number | null;
  open_signature: string | null;
  open_slot: number | null;
  close_signature: string | null;
  close_slot: number | null;
  dispute_state: DisputeState | null;
  dispute_opened_at: number | null;
  dispute_resolved_at: number | null;
  slashed_usdc: string;
  activity_at: number;
  max_slot: number;
  commitment: Commitment;
}

const str = (value: JsonValue | undefined): string => String(value ?? "");
const num = (value: JsonValue | undefined): number => Number(value ?? 0);

/** The row the events describe, or null when none is left (all dropped). */
export function executionFromEvents(id: string, events: readonly EventRecord[], creatorOf: (agent: string) => string | null): ExecutionRow | null {
  if (events.length === 0) return null;
  const first = events[0]!;
  const row: ExecutionRow = {
    id,
    agent: str(first.data.agent),
    payer: str(first.data.payer),
    api_key_id: null,
    creator: null,
    state: "open",
    refund_reason: null,
    amount_usdc: str(first.data.amountUsdc ?? "0"),
    price_per_unit_usdc: "0",
    max_units: "0",
    units: null,
    charged_usdc: null,
    returned_usdc: null,
    creator_share_usdc: "0",
    fee_usdc: "0",
    fee_shard: null,
    used_included_call: null,
    opened_at: null,
    deadline: null,
    closed_at: null,
    open_signature: null,
    open_slot: null,
    close_signature: null,
    close_slot: null,
    dispute_state: null,
    dispute_opened_at: null,
    dispute_resolved_at: null,
    slashed_usdc: "0",
    activity_at: 0,
    max_slot: 0,
    commitment: "finalized",
  };
  for (const event of events) {
    const data = event.data;
    if (typeof data.payer === "string") row.payer = data.payer;
    if (typeof data.agent === "string") row.agent = data.agent;
    if (data.apiKeyId !== undefined && data.apiKeyId !== null) row.api_key_id = str(data.apiKeyId);
    row.max_slot = Math.max(row.max_slot, event.slot);
    if (event.commitment === "confirmed") row.commitment = "confirmed";
    switch (event.name) {
      case "EscrowOpened":
        row.amount_usdc = str(data.amountUsdc);
        row.price_per_unit_usdc = str(data.pricePerUnitUsdc);
        row.max_units = str(data.maxUnits);
        row.opened_at = num(data.openedAt);
        row.deadline = num(data.deadline);
        row.used_included_call = data.usedIncludedCall === true;
        row.open_signature = event.signature;
        row.open_slot = event.slot;
        break;
      case "EscrowSettledToLog":
        row.state = "settled";
        row.amount_usdc = str(data.amountUsdc);
        row.units = str(data.units);
        row.charged_usdc = str(data.chargedUsdc);
        row.returned_usdc = str(data.returnedUsdc);
        row.creator_share_usdc = str(data.creatorShareUsdc);
        row.fee_usdc = str(data.feeUsdc);
        row.fee_shard = event.fee_shard;
        row.closed_at = num(data.settledAt);
        row.close_signature = event.signature;
        row.close_slot = event.slot;
        break;
      case "EscrowRefunded":
        row.state = "refunded";
        row.refund_reason = str(data.reason);
        row.units = null;
        row.charged_usdc = "0";
        row.returned_usdc = str(data.amountUsdc);
        row.closed_at = num(data.refundedAt);
        row.close_signature = event.signature;
        row.close_slot = event.slot;
        break;
      case "EscrowReclaimed":
        row.state = "reclaimed";
        row.units = null;
        row.charged_usdc = "0";
        row.returned_usdc = str(data.amountUsdc);
        row.closed_at = num(data.reclaimedAt);
        row.close_signature = event.signature;
        row.close_slot = event.slot;
        break;
      case "DisputeOpened":
        if (row.dispute_state === null) row.dispute_state = "open";
        row.dispute_opened_at = num(data.openedAt);
        break;
      case "DisputeResolved":
        row.dispute_state = data.upheld === true ? "upheld" : "rejected";
        row.slashed_usdc = str(data.slashedUsdc);
        row.dispute_resolved_at = num(data.resolvedAt);
        break;
      default:
        break;
    }
  }
  row.creator = creatorOf(row.agent);
  row.activity_at = row.opened_at ?? row.closed_at ?? row.dispute_opened_at ?? first.block_time ?? 0;
  return row;
}
