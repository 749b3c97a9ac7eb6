// An execution's row moved from state to state: each step is a conditional UPDATE from the state
// its writer saw, so two instances (a relayer and the finish job of another) never both move it.
import { runStatement, type Db, type Statement } from "../db/pool.js";
import { ApiError, type ErrorCode } from "../errors.js";
import { queueDeliveriesSql } from "../webhooks/webhook-events.js";
import { completeExecutions } from "./confirmations.js";
import type { ExecutionRow, ExecutionState } from "./execution-row.js";

export class ExecutionStore {
  private readonly advanceStatements = new Map<string, Statement>();

  constructor(private readonly db: Db) {}

  async row(id: string): Promise<ExecutionRow> {
    const { rows } = await this.db.query<ExecutionRow>("SELECT * FROM executions WHERE id = $1", [id]);
    if (!rows[0]) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return rows[0];
  }

  /**
   * Moves `row` to `state` with `changes` (column values), unless another instance moved it
   * first: then the row as that instance left it.
   */
  async advance(row: ExecutionRow, state: ExecutionState, changes: Record<string, unknown>): Promise<ExecutionRow> {
    const columns = Object.keys(changes);
    const { rowCount } = await runStatement(this.db, this.advanceStatement(columns), [
      row.id,
      state,
      row.state,
      ...columns.map((column) => changes[column]),
    ]);
    if (rowCount === 1) return { ...row, ...changes, state } as ExecutionRow;
    return this.row(row.id);
  }

  // One statement per set of columns, as each step always writes the same ones. Numbered, not
  // named after the columns: PostgreSQL cuts statement names at 63 characters.
  private advanceStatement(columns: string[]): Statement {
    const key = columns.join(",");
    let statement = this.advanceStatements.get(key);
    if (!statement) {
      const sets = columns.map((column, i) => `${column} = $${i + 4}`);
      statement = {
        name: `executions_advance_${this.advanceStatements.size + 1}`,
        text: `UPDATE executions SET state = $2, ${[...sets, "updated_at = clock_timestamp()"].join(", ")}
       WHERE id = $1 AND state = $3`,
      };
      this.advanceStatements.set(key, statement);
    }
    return statement;
  }

  /**
   * The settle or refund is confirmed (or the payer reclaimed the escrow): the execution is final
   * and the key's usage exact.
   */
  complete(row: ExecutionRow, final: "settled" | "refunded"): Promise<void> {
    return completeExecutions(this.db, [{ id: row.id, from: row.state as "settling" | "refunding", final, finished_at: null }]);
  }

  /** No escrow opened: nothing charged; the reservation on the key is released. */
  async fail(row: ExecutionRow, code: ErrorCode, message: string): Promise<ExecutionRow> {
    const client = await this.db.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<ExecutionRow>(
        // Its webhook deliveries (execution.failed) are queued by the same statement.
        `WITH failed AS (
           UPDATE executions SET state = 'failed', failure_code = $2, failure_message = $3, finished_at = clock_timestamp(),
             updated_at = clock_timestamp() WHERE id = $1 AND state = 'opening' RETURNING *
         ), events AS (
           SELECT id AS execution_id, wallet, 'execution.failed' AS event FROM failed
         ), deliveries AS (
           ${queueDeliveriesSql("events")}
         )
         SELECT * FROM failed`,
        [row.id, code, message],
      );
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
      await client.query("COMMIT");
      return rows[0] ?? (await this.row(row.id));
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
