// The two writes every execution makes on its way (its row with the key's spending reservation,
// then its verified result with the recorded settle), group-committed: the executions that reach
// a write while the previous batch of it runs go together in one statement, one round trip and
// one WAL flush. Each batch is one statement, so it commits or fails whole, and what it says of
// each execution is exactly what the single statement would have said.
import type { SignedTransaction } from "../chain/tx-sender.js";
import { Batcher } from "../db/batcher.js";
import { runStatement, type Db, type Statement } from "../db/pool.js";
import type { ExecutionRow } from "./execution-row.js";

/** A new execution's row, as it is inserted. */
export type NewExecution = Pick<
  ExecutionRow,
  | "id"
  | "api_key_id"
  | "wallet"
  | "network"
  | "agent"
  | "mode"
  | "owner"
  | "task"
  | "parameters"
  | "request_hash"
  | "payer_token_account"
  | "used_subscription"
  | "quoted_usdc"
  | "escrow_tx"
>;

/** A verified result and its recorded settle; the escrow's facts when the row does not hold them yet. */
export type SettleRecord = Pick<
  ExecutionRow,
  | "creator_finished_at"
  | "output"
  | "result_hash"
  | "result_digest"
  | "creator_signature"
  | "signing_key"
  | "payout_account"
  | "fee_shard"
  | "receipt_in_log"
> &
  Partial<Pick<ExecutionRow, "amount_usdc" | "escrow_deadline" | "escrow_opened_at" | "creator_started_at">> & {
    settle_tx: SignedTransaction;
  };

// The key's spending reservation and the execution row are one statement: the key's row is
// locked only while it runs, so executions under one key do not queue behind each other.
export const RESERVE_AND_INSERT: Statement = {
  name: "executions_reserve_and_insert",
  text: `WITH reserved AS (
     UPDATE api_keys SET spent_usdc = spent_usdc + $13::numeric, execution_count = execution_count + 1
      WHERE id = $2::text AND (spending_cap_usdc IS NULL OR spent_usdc + $13::numeric <= spending_cap_usdc)
     RETURNING id
   )
   INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, owner, task, parameters, request_hash,
     payer_token_account, used_subscription, quoted_usdc, escrow_tx)
   SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'opening', $7::text, $8::text, $9::jsonb,
          $10::bytea, $11::text, $12::boolean, $13::numeric, $14::jsonb
     FROM reserved
   RETURNING created_at`,
};

// A batch reserves each key's total at once: a key whose total would pass its cap reserves
// nothing here, and its executions are inserted one by one after, each against the cap alone.
const RESERVE_AND_INSERT_BATCH: Statement = {
  name: "executions_reserve_and_insert_batch",
  text: `WITH input AS (
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
   SELECT v.id, v.api_key_id, v.wallet, v.network, v.agent, v.mode, 'opening', v.owner, v.task, v.parameters,
          decode(v.request_hash, 'hex'), v.payer_token_account, v.used_subscription, v.quoted_usdc, v.escrow_tx
     FROM input v JOIN reserved r ON r.id = v.api_key_id
   RETURNING id, created_at`,
};

// What a settle records on its row, from a recordset `v` of the columns below.
const SETTLE_SET = `state = 'settling',
     amount_usdc = coalesce(v.amount_usdc, e.amount_usdc), escrow_deadline = coalesce(v.escrow_deadline, e.escrow_deadline),
     escrow_opened_at = coalesce(v.escrow_opened_at, e.escrow_opened_at),
     creator_started_at = coalesce(v.creator_started_at, e.creator_started_at),
     creator_finished_at = v.creator_finished_at, output = v.output, result_hash = decode(v.result_hash, 'hex'),
     result_digest = decode(v.result_digest, 'hex'), creator_signature = decode(v.creator_signature, 'hex'),
     signing_key = v.signing_key, payout_account = v.payout_account, fee_shard = v.fee_shard,
     receipt_in_log = v.receipt_in_log, settle_tx = v.settle_tx,
     updated_at = clock_timestamp()`;
const SETTLE_INPUT = `jsonb_to_recordset($1::jsonb) AS v(id text, from_state text, amount_usdc numeric, escrow_deadline timestamptz,
     escrow_opened_at timestamptz, creator_started_at timestamptz, creator_finished_at timestamptz, output jsonb,
     result_hash text, result_digest text, creator_signature text, signing_key text, payout_account text, fee_shard int,
     receipt_in_log boolean, settle_tx jsonb)`;

export const SETTLE_BATCH: Statement = {
  name: "executions_settle_batch",
  text: `UPDATE executions e SET ${SETTLE_SET}
   FROM ${SETTLE_INPUT}
   WHERE e.id = v.id AND e.state = v.from_state
   RETURNING e.id`,
};

// All the rows or none, in one statement: the rows still in their state are locked first (a row
// another transaction moved meanwhile is re-read and left out), and they are written only if
// that is every one of them. One round trip, no transaction around it.
const SETTLE_ALL: Statement = {
  name: "executions_settle_all",
  text: `WITH v AS (SELECT * FROM ${SETTLE_INPUT}),
   locked AS (SELECT e.id FROM executions e JOIN v ON e.id = v.id AND e.state = v.from_state FOR UPDATE OF e)
   UPDATE executions e SET ${SETTLE_SET}
   FROM v
   WHERE e.id = v.id AND e.id IN (SELECT id FROM locked) AND (SELECT count(*) FROM locked) = (SELECT count(*) FROM v)
   RETURNING e.id`,
};

/** A refund on its way, with what the row does not hold yet (a sync call's escrow facts, the creator's end). */
export type RefundRecord = Pick<ExecutionRow, "refund_reason" | "failure_code" | "failure_message"> &
  Partial<Pick<ExecutionRow, "creator_finished_at" | "amount_usdc" | "escrow_deadline" | "escrow_opened_at" | "creator_started_at">> & {
    refund_tx: SignedTransaction;
  };

// A batch's refund recorded on every row or on none, as SETTLE_ALL does for a settlement.
const REFUND_ALL: Statement = {
  name: "executions_refund_all",
  text: `WITH v AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, from_state text, refund_tx jsonb, refund_reason text,
       failure_code text, failure_message text, creator_finished_at timestamptz, amount_usdc numeric, escrow_deadline timestamptz,
       escrow_opened_at timestamptz, creator_started_at timestamptz)),
   locked AS (SELECT e.id FROM executions e JOIN v ON e.id = v.id AND e.state = v.from_state FOR UPDATE OF e)
   UPDATE executions e SET state = 'refunding', refund_tx = v.refund_tx, refund_reason = v.refund_reason,
     failure_code = v.failure_code, failure_message = v.failure_message,
     creator_finished_at = coalesce(v.creator_finished_at, e.creator_finished_at),
     amount_usdc = coalesce(v.amount_usdc, e.amount_usdc), escrow_deadline = coalesce(v.escrow_deadline, e.escrow_deadline),
     escrow_opened_at = coalesce(v.escrow_opened_at, e.escrow_opened_at),
     creator_started_at = coalesce(v.creator_started_at, e.creator_started_at),
     updated_at = clock_timestamp()
   FROM v
   WHERE e.id = v.id AND e.id IN (SELECT id FROM locked) AND (SELECT count(*) FROM locked) = (SELECT count(*) FROM v)
   RETURNING e.id`,
};

export interface Refund {
  id: string;
  from_state: string;
  record: RefundRecord;
}

export interface Settle {
  id: string;
  from_state: string;
  record: SettleRecord;
}

/** Most executions in one statement. */
const MAX_BATCH = 64;

export function insertValues(execution: NewExecution): unknown[] {
  return [
    execution.id,
    execution.api_key_id,
    execution.wallet,
    execution.network,
    execution.agent,
    execution.mode,
    execution.owner,
    execution.task,
    JSON.stringify(execution.parameters),
    execution.request_hash,
    execution.payer_token_account,
    execution.used_subscription,
    execution.quoted_usdc,
    execution.escrow_tx,
  ];
}

export class ExecutionWrites {
  private readonly inserts: Batcher<NewExecution, Date | undefined>;
  private readonly settles: Batcher<Settle, boolean>;

  constructor(private readonly db: Db) {
    // One insert batch at a time: two could lock the same keys in opposite orders.
    this.inserts = new Batcher((executions) => this.insertBatch(executions), { max_batch: MAX_BATCH, max_in_flight: 1 });
    this.settles = new Batcher((settles) => this.settleBatch(settles), { max_batch: MAX_BATCH, max_in_flight: 2 });
  }

  /** Inserts the row and reserves its quote on the key; undefined if the key's spending cap refuses it. */
  insert(execution: NewExecution): Promise<Date | undefined> {
    return this.inserts.submit(execution);
  }

  /** Moves the execution from `from_state` to `settling`; false if another instance moved it first. */
  settle(id: string, from_state: string, record: SettleRecord): Promise<boolean> {
    return this.settles.submit({ id, from_state, record });
  }

  /**
   * Moves every one of `settles` to `settling` in one statement, or none of them: they share
   * one settle_batch transaction, which must not be recorded for some and sent for all. False if
   * any was moved by another instance first.
   */
  async settleAll(settles: Settle[]): Promise<boolean> {
    const { rows } = await runStatement<{ id: string }>(this.db, SETTLE_ALL, [JSON.stringify(settles.map(settleInput))]);
    return rows.length === settles.length;
  }

  /**
   * Moves every one of `refunds` to `refunding` in one statement, or none of them: they share one
   * transaction of refunds. False if any was moved by another instance first.
   */
  async refundAll(refunds: Refund[]): Promise<boolean> {
    const input = refunds.map(({ id, from_state, record }) => ({ ...record, id, from_state }));
    const { rows } = await runStatement<{ id: string }>(this.db, REFUND_ALL, [JSON.stringify(input)]);
    return rows.length === refunds.length;
  }

  private async insertBatch(executions: NewExecution[]): Promise<(Date | undefined)[]> {
    if (executions.length === 1) return [await this.insertOne(executions[0]!)];
    const input = executions.map((execution) => ({ ...execution, request_hash: execution.request_hash.toString("hex") }));
    let rows: { id: string; created_at: Date }[];
    try {
      ({ rows } = await runStatement<{ id: string; created_at: Date }>(this.db, RESERVE_AND_INSERT_BATCH, [JSON.stringify(input)]));
    } catch {
      // Whatever failed, fails again for its own execution only.
      rows = [];
    }
    const created = new Map(rows.map((row) => [row.id, row.created_at]));
    const answers: (Date | undefined)[] = [];
    for (const execution of executions) {
      answers.push(created.get(execution.id) ?? (await this.insertOne(execution)));
    }
    return answers;
  }

  private async insertOne(execution: NewExecution): Promise<Date | undefined> {
    const { rows } = await runStatement<{ created_at: Date }>(this.db, RESERVE_AND_INSERT, insertValues(execution));
    return rows[0]?.created_at;
  }

  private async settleBatch(settles: Settle[]): Promise<boolean[]> {
    if (settles.length === 1) return this.settleTogether(settles);
    try {
      return await this.settleTogether(settles);
    } catch {
      // Whatever failed, fails again for its own execution only.
      const answers: boolean[] = [];
      for (const settle of settles) answers.push(...(await this.settleTogether([settle])));
      return answers;
    }
  }

  private async settleTogether(settles: Settle[]): Promise<boolean[]> {
    const { rows } = await runStatement<{ id: string }>(this.db, SETTLE_BATCH, [JSON.stringify(settles.map(settleInput))]);
    const moved = new Set(rows.map((row) => row.id));
    return settles.map(({ id }) => moved.has(id));
  }
}

function settleInput({ id, from_state, record }: Settle) {
  return {
    ...record,
    id,
    from_state,
    result_hash: record.result_hash!.toString("hex"),
    result_digest: record.result_digest!.toString("hex"),
    creator_signature: record.creator_signature!.toString("hex"),
  };
}
