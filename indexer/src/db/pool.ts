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
  // pg-pool hears errors only on idle clients: one terminated while checked out between two
  // statements would end the process. Its next statement fails instead, and the pool drops it.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  return pool;
}

const statementNames = new Map<string, string>();

/**
 * A statement prepared once per connection and re-used by its name (the server plans it once):
 * for the reads GraphQL repeats, whose planning costs as much as their execution.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (!name) {
    name = `s${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/** Runs `work` in one database transaction on one client. */
/** `begin`: what opens the transaction, with statements to run first in the same round trip. */
export async function inTransaction<T>(pool: Pool, work: (client: Client) => Promise<T>, begin = "BEGIN"): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
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
