// The only writer of `executions`: every statement that inserts or moves a row is a method here,
// its text in execution-statements.ts. A move is asked of the transition table first
// (execution-transitions.ts), then written as a conditional statement from the state its writer
// saw, so two instances (a relayer and the finish job of another) never both move it.
//
// The two writes every execution makes on its way (its row with the key's spending reservation,
// then its verified result with the recorded settle) are group-committed: the executions that
// reach a write while the previous batch of it runs go together in one statement, one round
// trip and one WAL flush. Each batch is one statement, so it commits or fails whole, and what it
// says of each execution is exactly what the single statement would have said.
import { inTransaction, prepared } from "@agent-market/service";

import type { SignedTransaction } from "../chain/tx-sender.js";
import { Batcher } from "../db/batcher.js";
import type { Db } from "../db/database.js";
import { ApiError, type ErrorCode } from "../errors.js";
import type { EscrowFacts, ExecutionRow } from "./execution-row.js";
import {
  advanceStatement,
  CLAIM_OWNER_SQL,
  COMPLETE,
  FAIL_SQL,
  LEAF_INDEX_SQL,
  RECORD_OPEN,
  REFUND_ALL,
  RESERVE_AND_INSERT,
  RESERVE_AND_INSERT_BATCH,
  SETTLE_ALL,
  SETTLE_BATCH,
} from "./execution-statements.js";
import { transition, type Fact } from "./execution-transitions.js";

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
  | "units"
  | "charged_usdc"
  | "creator_signature"
  | "signing_key"
  | "payout_account"
  | "fee_shard"
> &
  Partial<EscrowFacts> & {
    settle_tx: SignedTransaction;
  };

/** A refund on its way, with what the row does not hold yet (a sync call's escrow facts, the creator's end). */
export type RefundRecord = Pick<ExecutionRow, "refund_reason" | "failure_code" | "failure_message"> &
  Partial<Pick<ExecutionRow, "creator_finished_at"> & EscrowFacts> & {
    refund_tx: SignedTransaction;
  };

export interface Settle {
  id: string;
  from_state: ExecutionRow["state"];
  record: SettleRecord;
}

export interface Refund {
  id: string;
  from_state: ExecutionRow["state"];
  record: RefundRecord;
}

export interface Completion {
  id: string;
  from: "settling" | "refunding";
  final: "settled" | "refunded";
  /** When the caller got its answer; kept if the row has one already. */
  finished_at: Date | null;
}

/** Most executions in one statement. */
const MAX_BATCH = 64;

export class ExecutionStore {
  private readonly advanceStatements = new Map<string, string>();
  private readonly inserts: Batcher<NewExecution, Date | undefined>;
  private readonly settles: Batcher<Settle, boolean>;

  constructor(private readonly db: Db) {
    // One insert batch at a time: two could lock the same keys in opposite orders.
    this.inserts = new Batcher((executions) => this.insertBatch(executions), { max_batch: MAX_BATCH, max_in_flight: 1 });
    this.settles = new Batcher((settles) => this.settleBatch(settles), { max_batch: MAX_BATCH, max_in_flight: 2 });
  }

  async row(id: string): Promise<ExecutionRow> {
    const { rows } = await this.db.query<ExecutionRow>("SELECT * FROM executions WHERE id = $1", [id]);
    if (!rows[0]) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return rows[0];
  }

  /** Inserts the row and reserves its quote on the key; undefined if the key's spending cap refuses it. */
  insert(execution: NewExecution): Promise<Date | undefined> {
    return this.inserts.submit(execution);
  }

  /**
   * Claims the Idempotency-Key for `execution` and inserts it: one transaction, as the claim must
   * vanish if the key's spending cap refuses the execution. Not claimed: another request has it.
   */
  async claimAndInsert(
    execution: NewExecution,
    idempotency_key: string,
    fingerprint: Buffer,
  ): Promise<{ claimed: false } | { claimed: true; created_at: Date | undefined }> {
    const client = await this.db.connect();
    try {
      await client.query("BEGIN");
      const claimed = await client.query(
        `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, execution_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING`,
        [execution.api_key_id, idempotency_key, fingerprint, execution.id],
      );
      if (claimed.rowCount === 0) {
        await client.query("ROLLBACK");
        return { claimed: false };
      }
      const created_at = (await client.query<{ created_at: Date }>(prepared(client, RESERVE_AND_INSERT, insertValues(execution)))).rows[0]?.created_at;
      await client.query(created_at ? "COMMIT" : "ROLLBACK");
      return { claimed: true, created_at };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** An async execution's job takes the row over (owner_claimed); false if a run signed its open already. */
  async claimOwner(id: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.db.query(CLAIM_OWNER_SQL, [id, owner]);
    return rowCount !== 0;
  }

  /**
   * Records `fact` on `row` with `changes` (column values), unless another instance moved it
   * first: then the row as that instance left it. Throws TransitionRefused, writing nothing, if
   * the table does not allow `fact` in the state the row was read in.
   */
  async advance(row: ExecutionRow, fact: Fact, changes: Record<string, unknown>): Promise<ExecutionRow> {
    const state = transition(row.state, fact);
    const columns = Object.keys(changes);
    const { rowCount } = await this.db.query(prepared(this.db, this.advanceStatement(columns), [
      row.id,
      state,
      row.state,
      ...columns.map((column) => changes[column]),
    ]));
    if (rowCount === 1) return { ...row, ...changes, state } as ExecutionRow;
    return this.row(row.id);
  }

  private advanceStatement(columns: string[]): string {
    const key = columns.join(",");
    let statement = this.advanceStatements.get(key);
    if (!statement) {
      statement = advanceStatement(columns);
      this.advanceStatements.set(key, statement);
    }
    return statement;
  }

  /**
   * Records `escrow_tx` as the open of every one of `rows` (open_recorded), in place of each
   * one's own unsent open, or on none: false if any was moved since it was read.
   */
  async recordOpen(rows: ExecutionRow[], escrow_tx: SignedTransaction): Promise<boolean> {
    for (const row of rows) transition(row.state, "open_recorded");
    const { rowCount } = await this.db.query(prepared(this.db, RECORD_OPEN, [
      rows.map((row) => row.id),
      JSON.stringify(escrow_tx),
      rows.map((row) => row.escrow_tx?.signature ?? null),
    ]));
    return rowCount === rows.length;
  }

  /** Moves the execution from `from_state` to `settling` (settle_recorded); false if another instance moved it first. */
  async settle(id: string, from_state: ExecutionRow["state"], record: SettleRecord): Promise<boolean> {
    transition(from_state, "settle_recorded");
    return this.settles.submit({ id, from_state, record });
  }

  /**
   * Moves every one of `settles` to `settling` in one statement, or none of them: they share
   * one settle_batch transaction, which must not be recorded for some and sent for all. False if
   * any was moved by another instance first.
   */
  async settleAll(settles: Settle[]): Promise<boolean> {
    for (const settle of settles) transition(settle.from_state, "settle_recorded");
    const { rows } = await this.db.query<{ id: string }>(prepared(this.db, SETTLE_ALL, [JSON.stringify(settles.map(settleInput))]));
    return rows.length === settles.length;
  }

  /**
   * Moves every one of `refunds` to `refunding` in one statement, or none of them: they share one
   * transaction of refunds. False if any was moved by another instance first.
   */
  async refundAll(refunds: Refund[]): Promise<boolean> {
    for (const refund of refunds) transition(refund.from_state, "refund_recorded");
    const input = refunds.map(({ id, from_state, record }) => ({ ...record, id, from_state }));
    const { rows } = await this.db.query<{ id: string }>(prepared(this.db, REFUND_ALL, [JSON.stringify(input)]));
    return rows.length === refunds.length;
  }

  /**
   * The settle or refund is confirmed (or the payer reclaimed the escrow): the execution is final
   * and the key's usage exact.
   */
  complete(row: ExecutionRow, final: "settled" | "refunded"): Promise<void> {
    return this.completeAll([{ id: row.id, from: row.state as "settling" | "refunding", final, finished_at: null }]);
  }

  /**
   * Moves executions from `from` to `final` (only those still in `from`: another instance may have
   * finished one first) and releases on each API key what was reserved but not charged: the whole
   * quote for a refund, the difference for a settlement whose escrow differs from the quote.
   */
  async completeAll(completions: Completion[]): Promise<void> {
    if (completions.length === 0) return;
    for (const { from, final } of completions) {
      const fact: Fact = final === "settled" ? "confirmed_settled" : "confirmed_refunded";
      if (transition(from, fact) !== final) throw new Error(`${fact} does not end in ${final}`);
    }
    await this.db.query(prepared(this.db, COMPLETE, [
      completions.map((c) => c.id),
      completions.map((c) => c.from),
      completions.map((c) => c.final),
      completions.map((c) => c.finished_at),
    ]));
  }

  /** No escrow opened (open_failed): nothing charged; the reservation on the key is released. */
  async fail(row: ExecutionRow, code: ErrorCode, message: string): Promise<ExecutionRow> {
    transition(row.state, "open_failed");
    const failed = await inTransaction(this.db, async (client) => {
      const { rows } = await client.query<ExecutionRow>(FAIL_SQL, [row.id, code, message]);
      if (rows.length === 1) {
        await client.query(
          "UPDATE api_keys SET spent_usdc = spent_usdc - $2, execution_count = execution_count - 1 WHERE id = $1",
          [row.api_key_id, row.quoted_usdc],
        );
        // A failure on our side that a retry can cure frees the Idempotency-Key, or the retry
        // the 503 invites would only replay the failure.
        if (code === "relayer_underfunded") {
          await client.query("DELETE FROM idempotency_keys WHERE api_key_id = $1 AND execution_id = $2", [row.api_key_id, row.id]);
        }
      }
      return rows[0];
    });
    return failed ?? (await this.row(row.id));
  }

  /** Where the settlement of this settled execution sits in its agent's receipt log, as its event says. */
  async recordLeafIndex(id: string, leaf_index: bigint): Promise<void> {
    await this.db.query(LEAF_INDEX_SQL, [id, leaf_index.toString()]);
  }

  private async insertBatch(executions: NewExecution[]): Promise<(Date | undefined)[]> {
    if (executions.length === 1) return [await this.insertOne(executions[0]!)];
    const input = executions.map((execution) => ({ ...execution, request_hash: execution.request_hash.toString("hex") }));
    let rows: { id: string; created_at: Date }[];
    try {
      ({ rows } = await this.db.query<{ id: string; created_at: Date }>(prepared(this.db, RESERVE_AND_INSERT_BATCH, [JSON.stringify(input)])));
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
    const { rows } = await this.db.query<{ created_at: Date }>(prepared(this.db, RESERVE_AND_INSERT, insertValues(execution)));
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
    const { rows } = await this.db.query<{ id: string }>(prepared(this.db, SETTLE_BATCH, [JSON.stringify(settles.map(settleInput))]));
    const moved = new Set(rows.map((row) => row.id));
    return settles.map(({ id }) => moved.has(id));
  }
}

function insertValues(execution: NewExecution): unknown[] {
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
