// The PostgreSQL pool. u64 amounts are numeric columns read as strings, never as numbers.
import pg from "pg";

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
/** What both a pool and a checked-out client answer: one statement. */
export type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

// int8 as a string, like numeric: slots and counts are turned into bigint or number where used.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => value);

export function createPool(databaseUrl: string, max = 10): Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // An idle client whose server went away must not take the process down.
  pool.on("error", () => {});
  return pool;
}

/** Runs `work` in one database transaction on one client. */
export async function inTransaction<T>(pool: Pool, work: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Creates the database named in `url` if it does not exist (tests and the embedded setup). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
