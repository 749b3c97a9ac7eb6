// The indexer's migrations (migrations/NNNN_*.sql), applied at start to the network's schema
// through the service kit's runner: two indexers of one network starting together wait for each
// other, and indexers of different networks do not.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { migrate as applyMigrations, type Pool } from "@agent-market/service";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "migrations");

export function migrate(pool: Pool, schema: string): Promise<string[]> {
  return applyMigrations(pool, { dir: MIGRATIONS_DIR, history_table: `${schema}.migrations`, lock: `migrate:${schema}`, schema });
}
