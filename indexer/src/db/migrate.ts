// Applies migrations/NNNN_*.sql to the network's schema at start, each once and in order, under
// an advisory lock so that two processes starting together do not both apply one.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { inTransaction, type Pool } from "./pool.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "migrations");

/** A schema name is interpolated into SQL: only a plain identifier is accepted. */
export function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
  return schema;
}

export async function migrate(pool: Pool, schema: string): Promise<string[]> {
  checkSchemaName(schema);
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{4}_.+\.sql$/.test(name))
    .sort();
  return inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ name: string }>(`SELECT name FROM ${schema}.migrations`)).rows.map((row) => row.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = readFileSync(join(MIGRATIONS_DIR, file), "utf8").replaceAll("{{schema}}", schema);
      await client.query(sql);
      await client.query(`INSERT INTO ${schema}.migrations (name) VALUES ($1)`, [file]);
      applied.push(file);
    }
    return applied;
  });
}
