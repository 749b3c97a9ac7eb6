// The pool keeps the process alive through a connection lost while it is checked out.
import assert from "node:assert/strict";

import { createPool, inTransaction, type Db } from "../src/db/pool.js";
import { TEST_POSTGRES_URL } from "./support.js";

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
    db = createPool(TEST_POSTGRES_URL, 2);
    observer = createPool(TEST_POSTGRES_URL, 1);
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
