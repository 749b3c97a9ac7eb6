// The body of a delivery, written once before its first attempt and sent as it is on every
// attempt after: `{"type", "timestamp", "data"}` as Standard Webhooks recommends. An execution
// event's `data` is the execution object exactly as GET /v1/executions/:id returns it; a dispute
// event's is the dispute as GET /v1/disputes/:execution_id shows it, without the evidence.
import { toHex, formatUsdc } from "@agent-market/program";

import type { Db } from "../db/database.js";
import type { ExecutionRow } from "../executions/execution-row.js";
import { renderExecution } from "../executions/execution-view.js";
import { TEST_EVENT } from "./webhook-events.js";

export interface PayloadSource {
  id: string;
  event: string;
  execution_id: string | null;
  endpoint_id: string | null;
  created_at: Date;
}

interface DisputeRow {
  execution_id: string;
  network: string;
  agent: string;
  /** Recorded before the dispute is: the outcome is read by its leaf. */
  leaf_index: string | null;
  payer: string;
  creator: string | null;
  state: string;
  amount_usdc: string;
  slashed_usdc: string | null;
  evidence_hash: Buffer;
  opened_at: Date;
  resolved_at: Date | null;
  resolve_signature: string | null;
}

/** The body of `delivery`, from the rows as they stand (final ones: they no longer change). */
export async function renderPayload(db: Db, delivery: PayloadSource): Promise<string> {
  const envelope = (data: unknown) => JSON.stringify({ type: delivery.event, timestamp: delivery.created_at.toISOString(), data });
  if (delivery.event === TEST_EVENT) {
    return envelope({ object: "webhook_test", webhook_id: delivery.endpoint_id });
  }
  if (delivery.event.startsWith("execution.")) {
    const { rows } = await db.query<ExecutionRow>("SELECT * FROM executions WHERE id = $1", [delivery.execution_id]);
    return envelope(renderExecution(rows[0]!));
  }
  const { rows } = await db.query<DisputeRow>(
    `SELECT o.*, e.network, e.agent, e.leaf_index, e.wallet AS payer, l.creator
       FROM dispute_outcomes o JOIN executions e ON e.id = o.execution_id
       LEFT JOIN agent_listings l ON l.network = e.network AND l.agent = e.agent
      WHERE o.execution_id = $1`,
    [delivery.execution_id],
  );
  const dispute = rows[0]!;
  return envelope({
    object: "dispute",
    execution_id: dispute.execution_id,
    network: dispute.network,
    agent: dispute.agent,
    leaf_index: dispute.leaf_index,
    payer: dispute.payer,
    creator: dispute.creator,
    state: dispute.state,
    amount_usdc: formatUsdc(BigInt(dispute.amount_usdc)),
    slashed_usdc: dispute.slashed_usdc === null ? null : formatUsdc(BigInt(dispute.slashed_usdc)),
    evidence_hash: toHex(dispute.evidence_hash),
    opened_at: dispute.opened_at.toISOString(),
    resolved_at: dispute.resolved_at?.toISOString() ?? null,
    resolve_transaction: dispute.resolve_signature,
  });
}
