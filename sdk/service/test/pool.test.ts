// The pool keeps the process alive through a connection lost while it is checked out, and
// prepares statements only where it was asked to (a pooler sharing server sessions refuses them).
import assert from "node:assert/strict";

import { createPool, inTransaction, prepared, type Pool } from "../src/index.js";
import { TEST_POSTGRES_URL } from "./postgres.js";

type Db = Pool;

/** Ends the server side of connection `pid` and waits until its client has had time to hear it. */
async function terminate(observer: Db, pid: number): Promise<void> {
  await observer.query("SELECT pg_terminate_backend($1)", [pid]);
  for (let i = 0; i < 100; i += 1) {
    const { rowCount } = await observer.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
    if (rowCount === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
}

describe("database pool", () => {
  let db: Db;
  let observer: Db;

  beforeEach(() => {
    db = createPool(TEST_POSTGRES_URL, { max_connections: 2 });
    observer = createPool(TEST_POSTGRES_URL, { max_connections: 1 });
  });
  afterEach(async () => {
    await db.end();
    await observer.end();
  });

  it("survives a connection terminated between two statements of a transaction: the work fails, the pool serves on", async () => {
    const outcome = inTransaction(db, async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      // The server ends the connection while the work waits on something else (an RPC call):
      // without a listener of its own, the client's error event would end this process.
      await terminate(observer, rows[0]!.pid);
      await client.query("SELECT 1");
    });
    await assert.rejects(outcome, /terminat|not queryable|Connection/i);
    const { rows } = await db.query<{ one: number }>("SELECT 1 AS one");
    assert.equal(rows[0]!.one, 1);
    assert.equal(db.totalCount <= 2, true);
  });

  it("drops the broken client at release rather than handing it out again", async () => {
    const client = await db.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    await terminate(observer, rows[0]!.pid);
    client.release();
    const next = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    assert.notEqual(next.rows[0]!.pid, rows[0]!.pid);
  });
});

describe("statement policy", () => {
  const pools: Pool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
  });
  const pool = (options: Parameters<typeof createPool>[1]) => {
    const created = createPool(TEST_POSTGRES_URL, options);
    pools.push(created);
    return created;
  };
  /** Names of the statements the server holds for the connection `on` runs on. */
  const heldStatements = async (on: Pool) =>
    (await on.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map((row) => row.name);

  it("names a statement by its text where the pool prepares, on the pool and on its clients alike", async () => {
    const preparing = pool({ max_connections: 1, prepare_statements: true });
    const first = prepared(preparing, "SELECT 1 + $1::int AS sum", [1]);
    assert.match(String(first.name), /^s[0-9]+$/);
    assert.equal(prepared(preparing, "SELECT 1 + $1::int AS sum", [2]).name, first.name, "the same text, the same statement");
    assert.notEqual(prepared(preparing, "SELECT 2 + $1::int AS sum", [2]).name, first.name);
    assert.equal((await preparing.query<{ sum: number }>(first)).rows[0]!.sum, 2);
    assert.ok((await heldStatements(preparing)).includes(String(first.name)), "the server holds it for the connection");
    await inTransaction(preparing, async (client) => {
      assert.equal(prepared(client, "SELECT 1 + $1::int AS sum", [5]).name, first.name);
    });
  });

  it("runs every statement unnamed where it does not, so a pooler's shared session holds none", async () => {
    const plain = pool({ max_connections: 1 });
    const statement = prepared(plain, "SELECT 1 + $1::int AS sum", [1]);
    assert.equal(statement.name, undefined);
    assert.equal((await plain.query<{ sum: number }>(statement)).rows[0]!.sum, 2);
    assert.deepEqual(await heldStatements(plain), []);
    await inTransaction(plain, async (client) => {
      assert.equal(prepared(client, "SELECT 1", []).name, undefined);
    });
  });

  it("plans each call afresh only where asked (custom_plans)", async () => {
    const mode = async (on: Pool) => (await on.query<{ plan_cache_mode: string }>("SHOW plan_cache_mode")).rows[0]!.plan_cache_mode;
    assert.equal(await mode(pool({ max_connections: 1, prepare_statements: true, custom_plans: true })), "force_custom_plan");
    assert.equal(await mode(pool({ max_connections: 1, prepare_statements: true })), "auto");
  });
});
