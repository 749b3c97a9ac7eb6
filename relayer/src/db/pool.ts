// PostgreSQL through `pg`, and the schema migrations every relayer runs at start.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import pg from "pg";

export type Db = pg.Pool;
export type DbClient = pg.PoolClient;

// Pools whose server keeps each connection's prepared statements to itself. Behind a pooler that
// shares one server session between clients (PgBouncer in transaction mode), one client's named
// statement would collide with another's: such a pool gets unnamed statements only.
const preparing = new WeakSet<Db>();

// numeric (u64 amounts) and bigint come back as strings; callers turn them into bigint.
export function createPool(database_url: string, max_connections = 10, options: { prepare_statements?: boolean } = {}): Db {
  const pool = new pg.Pool({
    connectionString: database_url,
    max: max_connections,
    // A prepared statement's generic plan is made once, from the table sizes of that moment, and
    // kept for the connection's life unless an ANALYZE invalidates it: a batch joined to a table
    // that was small then would go on scanning the whole table as it grows. Custom plans are made
    // at each call from the table's current size; parsing is still saved. A SET rather than a
    // startup option, which poolers such as PgBouncer refuse; the pool hands the connection out
    // once it is done, and a failure fails that checkout.
    ...(options.prepare_statements
      ? {
          onConnect: async (client: pg.ClientBase) => {
            await client.query("SET plan_cache_mode = force_custom_plan");
          },
        }
      : {}),
  });
  // A dropped idle connection must not take the process down; the next query reconnects.
  pool.on("error", () => undefined);
  // pg-pool listens for errors only on idle clients: a connection terminated while checked out
  // between two statements (inside a transaction, during an RPC call) would emit an error nobody
  // hears and end the process. The work's next statement fails instead, and the pool drops the
  // broken client at release.
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
  if (options.prepare_statements) preparing.add(pool);
  return pool;
}

/** A statement on a hot path, worth parsing once per connection. */
export interface Statement {
  name: string;
  text: string;
}

/** Runs `statement`, prepared under its name where the pool allows it. */
export function runStatement<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Db,
  statement: Statement,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return preparing.has(db) ? db.query<R>({ name: statement.name, text: statement.text, values }) : db.query<R>(statement.text, values);
}

/** `work` inside one transaction on one connection: committed if it resolves, rolled back if not. */
export async function inTransaction<T>(db: Db, work: (client: DbClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "migrations");

/** Applies the migrations not applied yet, in file-name order, each in its own transaction. */
export async function migrate(db: Db, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const files = readdirSync(dir)
    .filter((name) => /^[0-9]{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
  const client = await db.connect();
  const applied: string[] = [];
  try {
    // Several relayers may start at once: the lock makes the others wait, then find nothing to do.
    await client.query("SELECT pg_advisory_lock(7431)");
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    for (const name of files) {
      await client.query("BEGIN");
      try {
        const done = await client.query("SELECT 1 FROM schema_migrations WHERE name = $1", [name]);
        if (done.rowCount === 0) {
          await client.query(readFileSync(join(dir, name), "utf8"));
          await client.query("INSERT INTO schema_migrations (name) VALUES ($1)", [name]);
          applied.push(name);
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock(7431)").catch(() => undefined);
    client.release();
  }
  return applied;
}

function maintenanceUrl(database_url: string): { url: string; database: string } {
  const url = new URL(database_url);
  const database = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`unsupported database name "${database}"`);
  url.pathname = "/postgres";
  return { url: url.href, database };
}

/** Creates the database DATABASE_URL names if the server does not have it yet. */
export async function ensureDatabase(database_url: string): Promise<void> {
  const { url, database } = maintenanceUrl(database_url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${database}`);
  } finally {
    await client.end();
  }
}

/** Drops the database DATABASE_URL names, closing its other connections (for tests). */
export async function dropDatabase(database_url: string): Promise<void> {
  const { url, database } = maintenanceUrl(database_url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
