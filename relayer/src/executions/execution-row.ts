// An execution's row and its states: the one shape the service, its writes, its view and the
// recovery jobs share. docs/architecture.md draws the state machine.
import { utils } from "@coral-xyz/anchor";
import type { NetworkName } from "@agent-market/program";

import type { SignedTransaction } from "../chain/tx-sender.js";

/**
 * `opening` (escrow being opened) → `running` (creator called; async only) → `settling` or
 * `refunding` (final transaction sent) → `settled` or `refunded` (confirmed); `failed` when no
 * escrow opened, nothing charged.
 */
export const EXECUTION_STATES = ["opening", "running", "settling", "refunding", "settled", "refunded", "failed"] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export interface ExecutionRow {
  id: string;
  api_key_id: string;
  wallet: string;
  network: NetworkName;
  agent: string;
  mode: "sync" | "async";
  state: ExecutionState;
  owner: string | null;
  task: string;
  parameters: Record<string, unknown>;
  request_hash: Buffer;
  payer_token_account: string;
  used_subscription: boolean;
  quoted_usdc: string;
  /** What the escrow holds: a fixed-price call's price, or the most a metered call may cost. */
  amount_usdc: string | null;
  /** The escrow's price per unit (base units, decimal): "0" for a fixed-price call. */
  price_per_unit_usdc: string | null;
  /** The most units the escrow may be charged for (decimal u64): "0" for a fixed-price call. */
  max_units: string | null;
  /** What the settlement charged of the amount (the rest went back to the payer), once recorded. */
  charged_usdc: string | null;
  /** The escrow's nonce (Agent.escrows_opened at its open, u64 as a decimal string): the v2 digest binds it. */
  escrow_nonce: string | null;
  escrow_deadline: Date | null;
  escrow_tx: SignedTransaction | null;
  output: unknown;
  result_hash: Buffer | null;
  result_digest: Buffer | null;
  /** The units the creator's answer reported and signed (u64, decimal; "0" for a fixed-price call). */
  units: string | null;
  creator_signature: Buffer | null;
  signing_key: string | null;
  payout_account: string | null;
  fee_shard: number | null;
  settle_tx: SignedTransaction | null;
  refund_tx: SignedTransaction | null;
  refund_reason: string | null;
  failure_code: string | null;
  failure_message: string | null;
  created_at: Date;
  escrow_opened_at: Date | null;
  creator_started_at: Date | null;
  creator_finished_at: Date | null;
  finished_at: Date | null;
  confirmed_at: Date | null;
  /** The settlement's index in the agent's receipt log, read from its event once a dispute needs it. */
  leaf_index: string | null;
}

/** The columns a new row leaves empty, for building one in memory. */
export const EMPTY_ROW = {
  amount_usdc: null,
  price_per_unit_usdc: null,
  max_units: null,
  charged_usdc: null,
  escrow_nonce: null,
  escrow_deadline: null,
  output: null,
  result_hash: null,
  result_digest: null,
  units: null,
  creator_signature: null,
  signing_key: null,
  payout_account: null,
  fee_shard: null,
  settle_tx: null,
  refund_tx: null,
  refund_reason: null,
  failure_code: null,
  failure_message: null,
  escrow_opened_at: null,
  creator_started_at: null,
  creator_finished_at: null,
  finished_at: null,
  confirmed_at: null,
  leaf_index: null,
} satisfies Partial<ExecutionRow>;

/** What the open escrow tells, recorded with the execution's next step. */
export type EscrowFacts = Pick<
  ExecutionRow,
  "amount_usdc" | "price_per_unit_usdc" | "max_units" | "escrow_nonce" | "escrow_deadline" | "escrow_opened_at" | "creator_started_at"
>;

const bs58 = utils.bytes.bs58;

export function executionIdBytes(id: string): Uint8Array {
  return bs58.decode(id.slice("exec_".length));
}

/** The 16 bytes an API key id (`key_` + base58) records in the escrow. */
export function keyIdBytes(id: string): Uint8Array {
  return bs58.decode(id.slice("key_".length));
}
