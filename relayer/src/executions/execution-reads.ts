// Reading executions: one by id, or a wallet's newest first, always within the calling wallet.
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import type { ExecutionRow } from "./execution-row.js";
import { renderExecution, type ExecutionObject } from "./execution-view.js";

export class ExecutionReads {
  constructor(private readonly db: Db) {}

  async get(wallet: string, id: string): Promise<ExecutionObject> {
    const { rows } = await this.db.query<ExecutionRow>(`SELECT * FROM executions WHERE id = $1 AND wallet = $2`, [id, wallet]);
    if (!rows[0]) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return renderExecution(rows[0]);
  }

  async list(
    wallet: string,
    page: { limit: number; starting_after?: string; agent?: string },
  ): Promise<{ data: ExecutionObject[]; has_more: boolean }> {
    const params: unknown[] = [wallet, page.limit + 1];
    const where = ["wallet = $1"];
    if (page.agent !== undefined) {
      params.push(page.agent);
      where.push(`agent = $${params.length}`);
    }
    if (page.starting_after !== undefined) {
      const cursor = await this.db.query<{ created_at: Date }>("SELECT created_at FROM executions WHERE id = $1 AND wallet = $2", [
        page.starting_after,
        wallet,
      ]);
      if (!cursor.rows[0]) throw new ApiError("invalid_cursor", undefined, "starting_after");
      params.push(cursor.rows[0].created_at, page.starting_after);
      where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
    }
    const { rows } = await this.db.query<ExecutionRow>(
      `SELECT * FROM executions WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT $2`,
      params,
    );
    return { data: rows.slice(0, page.limit).map(renderExecution), has_more: rows.length > page.limit };
  }
}
