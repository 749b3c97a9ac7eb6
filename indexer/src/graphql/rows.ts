// The rows the resolvers read, as PostgreSQL hands them over: numeric and bigint columns as
// decimal strings (never numbers: u64 amounts and slots), smallint as numbers, jsonb parsed. They
// are what the generated resolver types map the schema's objects to (generated/resolvers.ts).
import type { ServedReceiptLeaf } from "@agent-market/program";

export type StoredCommitment = "confirmed" | "finalized";

/** A row of `agents`. */
export interface AgentRecord {
  agent: string;
  agent_id: string | null;
  creator: string | null;
  endpoint: string | null;
  pricing: unknown;
  collateral_usdc: string;
  withdrawn_usdc: string;
  registered_at: string | null;
  retired_at: string | null;
  max_slot: string;
  commitment: StoredCommitment;
}

/** A row of `executions`. */
export interface ExecutionRecord {
  id: string;
  agent: string;
  payer: string;
  api_key_id: string | null;
  creator: string | null;
  state: "open" | "settled" | "refunded" | "reclaimed";
  /** The program's RefundReason variant (`Timeout`, `CreatorError`, …). */
  refund_reason: string | null;
  amount_usdc: string;
  creator_share_usdc: string;
  fee_usdc: string;
  fee_shard: number | null;
  used_included_call: boolean | null;
  opened_at: string | null;
  deadline: string | null;
  closed_at: string | null;
  open_signature: string | null;
  open_slot: string | null;
  close_signature: string | null;
  close_slot: string | null;
  dispute_state: "open" | "upheld" | "rejected" | null;
  dispute_opened_at: string | null;
  dispute_resolved_at: string | null;
  slashed_usdc: string;
  leaf_index: string | null;
  log_root: string | null;
  leaf_hash: string | null;
  receipt_leaf: ServedReceiptLeaf | null;
  activity_at: string;
  max_slot: string;
  commitment: StoredCommitment;
}

/** A `Subscribed` row of `events`: its data as the decoder stored it. */
export interface SubscriptionRecord {
  signature: string;
  instruction_index: number;
  slot: string;
  agent: string;
  commitment: StoredCommitment;
  data: {
    payer: string;
    amountUsdc: string;
    creatorShareUsdc: string;
    feeUsdc: string;
    expiresAt: string | null;
    includedCallsRemaining: string | number;
  };
}

/** The schema's name of a stored lower-case value (`settled` → `SETTLED`). */
export function upper<T extends string>(value: T): Uppercase<T> {
  return value.toUpperCase() as Uppercase<T>;
}
