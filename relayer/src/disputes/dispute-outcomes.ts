// What the relayer saw of a dispute on chain, recorded so that it outlives the Dispute account
// (resolution closes it), and the webhook events that recording a dispute makes happen.
import type { Db } from "../db/database.js";
import { queueDeliveriesSql } from "../webhooks/webhook-events.js";

export interface OutcomeRow {
  execution_id: string;
  state: "open" | "upheld" | "rejected";
  amount_usdc: string;
  evidence_hash: Buffer;
  opened_at: Date;
  slashed_usdc: string | null;
  resolved_at: Date | null;
  resolve_signature: string | null;
}

export async function recordDisputeOutcome(db: Db, execution_id: string, outcome: Omit<OutcomeRow, "execution_id">): Promise<OutcomeRow> {
  // The relayer learns of a dispute only here, when it reads one: the webhook events (to the
  // payer and to the agent's creator) are queued by this statement, the first time it records
  // the dispute (dispute.opened) and the first time it records its outcome (dispute.resolved).
  await db.query(
    `WITH before AS (
       SELECT state FROM dispute_outcomes WHERE execution_id = $1
     ), outcome AS (
       INSERT INTO dispute_outcomes (execution_id, state, amount_usdc, evidence_hash, opened_at, slashed_usdc, resolved_at, resolve_signature)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (execution_id) DO UPDATE SET state = EXCLUDED.state, amount_usdc = EXCLUDED.amount_usdc,
         evidence_hash = EXCLUDED.evidence_hash, opened_at = EXCLUDED.opened_at, slashed_usdc = EXCLUDED.slashed_usdc,
         resolved_at = EXCLUDED.resolved_at, resolve_signature = EXCLUDED.resolve_signature, updated_at = clock_timestamp()
       RETURNING execution_id, state
     ), events AS (
       SELECT o.execution_id, party.wallet, ev.event
         FROM outcome o JOIN executions e ON e.id = o.execution_id
         CROSS JOIN LATERAL (SELECT e.wallet UNION SELECT l.creator FROM agent_listings l
                              WHERE l.network = e.network AND l.agent = e.agent) party (wallet)
         CROSS JOIN LATERAL (SELECT 'dispute.opened' WHERE NOT EXISTS (SELECT 1 FROM before)
                             UNION ALL
                             SELECT 'dispute.resolved' WHERE o.state <> 'open'
                               AND NOT EXISTS (SELECT 1 FROM before WHERE state <> 'open')) ev (event)
     )
     ${queueDeliveriesSql("events")}`,
    [
      execution_id,
      outcome.state,
      outcome.amount_usdc,
      outcome.evidence_hash,
      outcome.opened_at,
      outcome.slashed_usdc,
      outcome.resolved_at,
      outcome.resolve_signature,
    ],
  );
  return { execution_id, ...outcome };
}
