// The relayer's database: the service kit's PostgreSQL pool (@agent-market/service) and the
// relayer's own migrations, which every relayer applies at start.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { migrate as applyMigrations, type Pool, type PoolClient } from "@agent-market/service";

export type Db = Pool;
export type DbClient = PoolClient;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "migrations");

/** Applies the relayer's migrations not applied yet (relayers starting together wait for each other). */
export function migrate(db: Db): Promise<string[]> {
  return applyMigrations(db, { dir: MIGRATIONS_DIR, history_table: "schema_migrations", lock: "relayer migrations" });
}
