// The views keyed by (agent, leaf index) rather than by execution id (docs/indexer.md, "Receipt
// log"): the receipt log's leaves, each stored once from its EscrowSettledToLog, and the disputes
// of leaves, rebuilt from their events. An execution id opened again settles into another leaf,
// which neither shadows the first nor shares its dispute.
import type { PoolClient } from "@agent-market/service";

import { DISPUTE_EVENTS, disputeFromEvents, disputeKey, type DisputeRow } from "./dispute-view.js";
import { EVENT_COLUMNS, EVENT_ORDER, eventFromDb } from "./event-reads.js";
import type { LeafRow } from "./receipt-leaf.js";

/**
 * Stores the leaves these EscrowSettledToLog events appended, by (agent, leaf index). The chain
 * appends each index once; a leaf stored from a fork that lost is replaced by the one that won
 * (the loser's row goes with its transaction in any case).
 */
export async function insertLeaves(client: PoolClient, schema: string, leaves: LeafRow[]): Promise<void> {
  if (leaves.length === 0) return;
  await client.query(
    `INSERT INTO ${schema}.receipt_leaves (agent, leaf_index, execution_id, nonce, leaf, leaf_hash, log_root, checkpoint, signature)
     SELECT agent, leaf_index, execution_id, nonce, leaf, leaf_hash, log_root, checkpoint, signature
     FROM jsonb_to_recordset($1::jsonb) AS r(agent text, leaf_index bigint, execution_id text, nonce numeric, leaf jsonb,
       leaf_hash text, log_root text, checkpoint boolean, signature text)
     ON CONFLICT (agent, leaf_index) DO UPDATE SET execution_id = EXCLUDED.execution_id, nonce = EXCLUDED.nonce, leaf = EXCLUDED.leaf,
       leaf_hash = EXCLUDED.leaf_hash, log_root = EXCLUDED.log_root, checkpoint = EXCLUDED.checkpoint, signature = EXCLUDED.signature`,
    [JSON.stringify(leaves)],
  );
}

/** The disputed leaves these events touch, as (agent, leaf index). */
export function disputeKeysOf(events: readonly { name: string; agent: string | null; data: Record<string, unknown> }[]): { agent: string; leaf_index: string }[] {
  const keys = new Map<string, { agent: string; leaf_index: string }>();
  for (const event of events) {
    if (!DISPUTE_EVENTS.includes(event.name) || event.agent === null) continue;
    const leaf_index = String(event.data.leafIndex);
    keys.set(disputeKey(event.agent, leaf_index), { agent: event.agent, leaf_index });
  }
  return [...keys.values()];
}

/** Rebuilds the disputes of these leaves from their stored events (gone if their opening is). */
export async function refreshDisputes(client: PoolClient, schema: string, keys: { agent: string; leaf_index: string }[]): Promise<void> {
  if (keys.length === 0) return;
  const events = (
    await client.query(
      `SELECT ${EVENT_COLUMNS} FROM ${schema}.events
       WHERE name IN ('DisputeOpened', 'DisputeResolved', 'DisputeClosed')
         AND (agent, data->>'leafIndex') IN (SELECT * FROM unnest($1::text[], $2::text[])) ${EVENT_ORDER}`,
      [keys.map((key) => key.agent), keys.map((key) => key.leaf_index)],
    )
  ).rows.map(eventFromDb);
  const rows: DisputeRow[] = [];
  const gone: { agent: string; leaf_index: string }[] = [];
  for (const key of keys) {
    const row = disputeFromEvents(events.filter((event) => event.agent === key.agent && String(event.data.leafIndex) === key.leaf_index));
    if (row) rows.push(row);
    else gone.push(key);
  }
  if (gone.length > 0) {
    await client.query(
      `DELETE FROM ${schema}.disputes d USING unnest($1::text[], $2::bigint[]) AS k (agent, leaf_index)
        WHERE d.agent = k.agent AND d.leaf_index = k.leaf_index`,
      [gone.map((key) => key.agent), gone.map((key) => key.leaf_index)],
    );
  }
  if (rows.length === 0) return;
  await client.query(
    `INSERT INTO ${schema}.disputes (agent, leaf_index, execution_id, payer, state, amount_usdc, evidence_hash, opened_at, resolved_at,
       slashed_usdc, closed, closed_at, max_slot, commitment)
     SELECT agent, leaf_index, execution_id, payer, state, amount_usdc, evidence_hash, opened_at, resolved_at, slashed_usdc, closed,
       closed_at, max_slot, commitment
     FROM jsonb_to_recordset($1::jsonb) AS r(agent text, leaf_index bigint, execution_id text, payer text, state text, amount_usdc numeric,
       evidence_hash text, opened_at bigint, resolved_at bigint, slashed_usdc numeric, closed boolean, closed_at bigint, max_slot bigint,
       commitment text)
     ON CONFLICT (agent, leaf_index) DO UPDATE SET execution_id = EXCLUDED.execution_id, payer = EXCLUDED.payer, state = EXCLUDED.state,
       amount_usdc = EXCLUDED.amount_usdc, evidence_hash = EXCLUDED.evidence_hash, opened_at = EXCLUDED.opened_at,
       resolved_at = EXCLUDED.resolved_at, slashed_usdc = EXCLUDED.slashed_usdc, closed = EXCLUDED.closed, closed_at = EXCLUDED.closed_at,
       max_slot = EXCLUDED.max_slot, commitment = EXCLUDED.commitment`,
    [JSON.stringify(rows)],
  );
}
