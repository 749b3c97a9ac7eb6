// The PostgreSQL pool and its statement policy. numeric (u64 amounts) and int8 come back as
// strings, as pg reads them: callers turn them into bigint, never into number.
import pg from "pg";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** What both a pool and a checked-out client answer: one statement. */
export type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

export interface PoolOptions {
  /** Connections at most. */
  max_connections?: number;
  /**
   * Hot statements parsed once per connection and re-used by name. Off behind a pooler that
   * shares one server session between clients (PgBouncer in transaction mode), where one client's
   * named statement would collide with another's: such a pool runs every statement unnamed.
   */
  prepare_statements?: boolean;
  /**
   * Plans made at each call from the tables' current sizes rather than once per connection (a
   * generic plan made while a table was small goes on scanning it whole as it grows): for writers
   * whose tables change size under them. Readers of settled tables keep the generic plan, whose
   * planning would cost as much as their execution.
   */
  custom_plans?: boolean;
}

// The pools, and their connections, whose statements are prepared (see prepare_statements).
const preparing = new WeakSet<object>();

export function createPool(database_url: string, options: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString: database_url,
    max: options.max_connections ?? 10,
    // A SET rather than a startup option, which poolers such as PgBouncer refuse; the pool hands
    // the connection out once it is done, and a failure fails that checkout.
    ...(options.custom_plans
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
    if (options.prepare_statements) preparing.add(client);
  });
  if (options.prepare_statements) preparing.add(pool);
  return pool;
}

const statementNames = new Map<string, string>();

/**
 * `text` with its `values`, as a statement prepared once per connection where `on` (a pool, or a
 * client checked out of one) prepares statements, else unnamed. Named by its text, so the same
 * text is one statement wherever it is written.
 */
export function prepared(on: Queryable, text: string, values: unknown[]): pg.QueryConfig {
  if (!preparing.has(on)) return { text, values };
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * `work` inside one transaction on one connection: committed if it resolves, rolled back if not.
 * `begin` opens it, with any statement to run first in the same round trip.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>, begin = "BEGIN"): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
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
