// Creating and dropping the database a connection string names: `npm start`, the tests and the
// benchmarks give each service (or each run) a database of its own on one server.
import pg from "pg";

function maintenanceUrl(database_url: string): { url: string; database: string } {
  const url = new URL(database_url);
  const database = decodeURIComponent(url.pathname.slice(1));
  // Interpolated into CREATE/DROP DATABASE, which take no parameters.
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`unsupported database name "${database}"`);
  url.pathname = "/postgres";
  return { url: url.href, database };
}

async function onServer<T>(database_url: string, work: (client: pg.Client, database: string) => Promise<T>): Promise<T> {
  const { url, database } = maintenanceUrl(database_url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client, database);
  } finally {
    await client.end();
  }
}

/** Creates the database `database_url` names if the server does not have it yet. */
export async function ensureDatabase(database_url: string): Promise<void> {
  await onServer(database_url, async (client, database) => {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${database}`);
  });
}

/** Drops the database `database_url` names, closing its other connections (tests, benchmarks). */
export async function dropDatabase(database_url: string): Promise<void> {
  await onServer(database_url, async (client, database) => {
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });
}
