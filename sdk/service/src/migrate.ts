// The schema migrations a service applies at start: NNNN_name.sql files of one folder, each once,
// in name order, each in its own transaction, under an advisory lock so that processes starting
// together wait for each other and then find nothing left to do.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import type { Pool } from "./pool.js";

export interface Migrations {
  /** The folder of NNNN_name.sql files. */
  dir: string;
  /** The table that records what was applied, schema-qualified where the service has a schema. */
  history_table: string;
  /** Names the advisory lock: services (or networks) whose migrations are independent use different ones. */
  lock: string;
  /** A schema created before anything else, and written for `{{schema}}` in the files. */
  schema?: string;
}

/** An identifier interpolated into SQL: only a plain lower-case name (optionally schema.name). */
function checkIdentifier(text: string, what: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$/.test(text)) throw new Error(`invalid ${what} ${JSON.stringify(text)}`);
  return text;
}

/** Applies the migrations not applied yet; answers their file names. */
export async function migrate(pool: Pool, migrations: Migrations): Promise<string[]> {
  const table = checkIdentifier(migrations.history_table, "history table");
  const schema = migrations.schema === undefined ? undefined : checkIdentifier(migrations.schema, "schema name");
  const files = readdirSync(migrations.dir)
    .filter((name) => /^[0-9]{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [migrations.lock]);
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${table} (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const name of files) {
      await client.query("BEGIN");
      try {
        const done = await client.query(`SELECT 1 FROM ${table} WHERE name = $1`, [name]);
        if (done.rowCount === 0) {
          const sql = readFileSync(join(migrations.dir, name), "utf8");
          await client.query(schema === undefined ? sql : sql.replaceAll("{{schema}}", schema));
          await client.query(`INSERT INTO ${table} (name) VALUES ($1)`, [name]);
          applied.push(name);
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [migrations.lock]).catch(() => undefined);
    client.release();
  }
  return applied;
}
