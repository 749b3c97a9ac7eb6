// The statements that write `executions`, for the store (execution-store.ts) alone: no other
// module imports this file, and no other module names the table in a write
// (test/execution-writer.test.ts reads the sources). The states they set and guard on are the
// transition table's (execution-transitions.ts). Each is one statement, so what it writes for a
// batch commits or fails whole.
import { queueDeliveriesSql } from "../webhooks/webhook-events.js";
import type { ExecutionState } from "./execution-row.js";
import { INITIAL_STATE, TRANSITIONS, type Fact } from "./execution-transitions.js";

/** The one state `fact` is recorded in, for a statement whose guard names it. */
function soleSource(fact: Fact): ExecutionState {
  const [from, ...others] = TRANSITIONS[fact].from;
  if (from === undefined || others.length > 0) throw new Error(`${fact} is recorded in more than one state`);
  return from;
}

// The key's spending reservation and the execution row are one statement: the key's row is
// locked only while it runs, so executions under one key do not queue behind each other.
export const RESERVE_AND_INSERT = `WITH reserved AS (
     UPDATE api_keys SET spent_usdc = spent_usdc + $13::numeric, execution_count = execution_count + 1
      WHERE id = $2::text AND (spending_cap_usdc IS NULL OR spent_usdc + $13::numeric <= spending_cap_usdc)
     RETURNING id
   )
   INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, owner, task, parameters, request_hash,
     payer_token_account, used_subscription, quoted_usdc, escrow_tx)
   SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, '${INITIAL_STATE}', $7::text, $8::text, $9::jsonb,
          $10::bytea, $11::text, $12::boolean, $13::numeric, $14::jsonb
     FROM reserved
   RETURNING created_at`;

// A batch reserves each key's total at once: a key whose total would pass its cap reserves
// nothing here, and its executions are inserted one by one after, each against the cap alone.
export const RESERVE_AND_INSERT_BATCH = `WITH input AS (
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, api_key_id text, wallet text, network text, agent text,
       mode text, owner text, task text, parameters jsonb, request_hash text, payer_token_account text,
       used_subscription boolean, quoted_usdc numeric, escrow_tx jsonb)
   ), totals AS (
     SELECT api_key_id, sum(quoted_usdc) AS total_usdc, count(*)::int AS calls FROM input GROUP BY api_key_id
   ), reserved AS (
     UPDATE api_keys k SET spent_usdc = k.spent_usdc + t.total_usdc, execution_count = k.execution_count + t.calls
       FROM totals t
      WHERE k.id = t.api_key_id AND (k.spending_cap_usdc IS NULL OR k.spent_usdc + t.total_usdc <= k.spending_cap_usdc)
     RETURNING k.id
   )
   INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, owner, task, parameters, request_hash,
     payer_token_account, used_subscription, quoted_usdc, escrow_tx)
   SELECT v.id, v.api_key_id, v.wallet, v.network, v.agent, v.mode, '${INITIAL_STATE}', v.owner, v.task, v.parameters,
          decode(v.request_hash, 'hex'), v.payer_token_account, v.used_subscription, v.quoted_usdc, v.escrow_tx
     FROM input v JOIN reserved r ON r.id = v.api_key_id
   RETURNING id, created_at`;

// Only a row no run has signed an open for: once one is recorded, the run that recorded it owns it.
export const CLAIM_OWNER_SQL =
  "UPDATE executions SET owner = $2, updated_at = clock_timestamp() WHERE id = $1 " +
  `AND state = '${soleSource("owner_claimed")}' AND escrow_tx IS NULL`;

/**
 * A move from the state its writer read (`$3`) to `$2`, with the columns given from `$4` on: one
 * statement per set of columns, as each step always writes the same ones.
 */
export function advanceStatement(columns: string[]): string {
  const sets = columns.map((column, i) => `${column} = $${i + 4}`);
  return `UPDATE executions SET state = $2, ${[...sets, "updated_at = clock_timestamp()"].join(", ")}
       WHERE id = $1 AND state = $3`;
}

// The open of a batch recorded on every row, or on none: from none recorded yet, or from the
// refused batch they were part of (`previous`). The rows still as seen are locked first, and
// written only if that is every one of them.
export const RECORD_OPEN = `WITH v AS (SELECT * FROM unnest($1::text[], $3::text[]) AS v (id, previous)),
   locked AS (SELECT e.id FROM executions e JOIN v ON e.id = v.id
               WHERE e.state = '${soleSource("open_recorded")}' AND e.escrow_tx->>'signature' IS NOT DISTINCT FROM v.previous FOR UPDATE OF e)
   UPDATE executions e SET escrow_tx = $2::jsonb, updated_at = clock_timestamp()
   WHERE e.id IN (SELECT id FROM locked) AND (SELECT count(*) FROM locked) = (SELECT count(*) FROM v)`;

// What a settle records on its row, from a recordset `v` of the columns below.
const SETTLE_SET = `state = '${TRANSITIONS.settle_recorded.to}',
     amount_usdc = coalesce(v.amount_usdc, e.amount_usdc), escrow_nonce = coalesce(v.escrow_nonce, e.escrow_nonce),
     price_per_unit_usdc = coalesce(v.price_per_unit_usdc, e.price_per_unit_usdc), max_units = coalesce(v.max_units, e.max_units),
     charged_usdc = v.charged_usdc,
     escrow_deadline = coalesce(v.escrow_deadline, e.escrow_deadline),
     escrow_opened_at = coalesce(v.escrow_opened_at, e.escrow_opened_at),
     creator_started_at = coalesce(v.creator_started_at, e.creator_started_at),
     creator_finished_at = v.creator_finished_at, output = v.output, result_hash = decode(v.result_hash, 'hex'),
     result_digest = decode(v.result_digest, 'hex'), units = v.units, creator_signature = decode(v.creator_signature, 'hex'),
     signing_key = v.signing_key, payout_account = v.payout_account, fee_shard = v.fee_shard,
     settle_tx = v.settle_tx,
     updated_at = clock_timestamp()`;
const SETTLE_INPUT = `jsonb_to_recordset($1::jsonb) AS v(id text, from_state text, amount_usdc numeric, escrow_nonce numeric,
     price_per_unit_usdc numeric, max_units numeric, charged_usdc numeric,
     escrow_deadline timestamptz, escrow_opened_at timestamptz, creator_started_at timestamptz, creator_finished_at timestamptz,
     output jsonb, result_hash text, result_digest text, units numeric, creator_signature text, signing_key text,
     payout_account text, fee_shard int, settle_tx jsonb)`;

export const SETTLE_BATCH = `UPDATE executions e SET ${SETTLE_SET}
   FROM ${SETTLE_INPUT}
   WHERE e.id = v.id AND e.state = v.from_state
   RETURNING e.id`;

// All the rows or none, in one statement: the rows still in their state are locked first (a row
// another transaction moved meanwhile is re-read and left out), and they are written only if
// that is every one of them. One round trip, no transaction around it.
export const SETTLE_ALL = `WITH v AS (SELECT * FROM ${SETTLE_INPUT}),
   locked AS (SELECT e.id FROM executions e JOIN v ON e.id = v.id AND e.state = v.from_state FOR UPDATE OF e)
   UPDATE executions e SET ${SETTLE_SET}
   FROM v
   WHERE e.id = v.id AND e.id IN (SELECT id FROM locked) AND (SELECT count(*) FROM locked) = (SELECT count(*) FROM v)
   RETURNING e.id`;

// A batch's refund recorded on every row or on none, as SETTLE_ALL does for a settlement.
export const REFUND_ALL = `WITH v AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, from_state text, refund_tx jsonb, refund_reason text,
       failure_code text, failure_message text, creator_finished_at timestamptz, amount_usdc numeric, escrow_nonce numeric,
       price_per_unit_usdc numeric, max_units numeric,
       escrow_deadline timestamptz, escrow_opened_at timestamptz, creator_started_at timestamptz)),
   locked AS (SELECT e.id FROM executions e JOIN v ON e.id = v.id AND e.state = v.from_state FOR UPDATE OF e)
   UPDATE executions e SET state = '${TRANSITIONS.refund_recorded.to}', refund_tx = v.refund_tx, refund_reason = v.refund_reason,
     failure_code = v.failure_code, failure_message = v.failure_message,
     creator_finished_at = coalesce(v.creator_finished_at, e.creator_finished_at),
     amount_usdc = coalesce(v.amount_usdc, e.amount_usdc), escrow_nonce = coalesce(v.escrow_nonce, e.escrow_nonce),
     price_per_unit_usdc = coalesce(v.price_per_unit_usdc, e.price_per_unit_usdc), max_units = coalesce(v.max_units, e.max_units),
     escrow_deadline = coalesce(v.escrow_deadline, e.escrow_deadline),
     escrow_opened_at = coalesce(v.escrow_opened_at, e.escrow_opened_at),
     creator_started_at = coalesce(v.creator_started_at, e.creator_started_at),
     updated_at = clock_timestamp()
   FROM v
   WHERE e.id = v.id AND e.id IN (SELECT id FROM locked) AND (SELECT count(*) FROM locked) = (SELECT count(*) FROM v)
   RETURNING e.id`;

// The webhook deliveries of each execution made final are queued by this very statement.
export const COMPLETE = `WITH done AS (
     UPDATE executions e
        SET state = d.final, confirmed_at = clock_timestamp(),
            finished_at = coalesce(e.finished_at, d.finished_at, clock_timestamp()), updated_at = clock_timestamp()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS d (id, from_state, final, finished_at)
      WHERE e.id = d.id AND e.state = d.from_state
     RETURNING e.id, e.wallet, d.final, e.api_key_id,
               e.quoted_usdc - CASE WHEN d.final = 'settled' THEN coalesce(e.charged_usdc, e.amount_usdc, e.quoted_usdc) ELSE 0 END AS released
   ), events AS (
     SELECT id AS execution_id, wallet,
            CASE WHEN final = 'settled' THEN 'execution.succeeded' ELSE 'execution.refunded' END AS event
       FROM done
   ), deliveries AS (
     ${queueDeliveriesSql("events")}
   ), released AS (
     SELECT api_key_id, sum(released) AS usdc FROM done GROUP BY api_key_id HAVING sum(released) <> 0
   )
   UPDATE api_keys k SET spent_usdc = k.spent_usdc - r.usdc FROM released r WHERE k.id = r.api_key_id`;

// Its webhook deliveries (execution.failed) are queued by the same statement.
export const FAIL_SQL = `WITH failed AS (
           UPDATE executions SET state = '${TRANSITIONS.open_failed.to}', failure_code = $2, failure_message = $3, finished_at = clock_timestamp(),
             updated_at = clock_timestamp() WHERE id = $1 AND state = '${soleSource("open_failed")}' RETURNING *
         ), events AS (
           SELECT id AS execution_id, wallet, 'execution.failed' AS event FROM failed
         ), deliveries AS (
           ${queueDeliveriesSql("events")}
         )
         SELECT * FROM failed`;

// A settled row's place in its agent's receipt log, learned from its settlement's event: no state
// is read or moved, and the chain's answer never changes, so a second write writes the same.
export const LEAF_INDEX_SQL = "UPDATE executions SET leaf_index = $2 WHERE id = $1 AND state = 'settled'";
