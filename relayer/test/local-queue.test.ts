// The in-process job queue: a failing statement in its poll fails that round and never the
// process, and a running job keeps its lock however long it runs.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { createPool, dropDatabase, ensureDatabase, migrate, type Db } from "../src/db/pool.js";
import { LocalJobQueue } from "../src/jobs/local-queue.js";
import { databaseUrl } from "./support.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("LocalJobQueue", () => {
  let url: string;
  let db: Db;
  let queue: LocalJobQueue | undefined;

  beforeEach(async () => {
    url = databaseUrl(`relayer_queue_${randomBytes(6).toString("hex")}`);
    await ensureDatabase(url);
    db = createPool(url, 4);
    await migrate(db);
  });
  afterEach(async () => {
    await queue?.close();
    queue = undefined;
    await db.end();
    await dropDatabase(url);
  });

  it("survives a failing statement in the poll of runDue's timer, and runs jobs once the database is back", async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    const stderr = process.stderr.write.bind(process.stderr);
    const logged: string[] = [];
    process.stderr.write = ((chunk: string) => (logged.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      const finished: string[] = [];
      queue = new LocalJobQueue(db);
      // The poll's statement fails: the table it reads is gone.
      await db.query("ALTER TABLE jobs RENAME TO jobs_away");
      await queue.start({
        finish: async (id) => void finished.push(id),
        execute: async () => undefined,
        sweep: async () => {
          throw new Error("sweep statement failed");
        },
      });
      await sleep(600);
      assert.deepEqual(rejections, [], "no rejection reached the event loop");
      assert.ok(logged.some((line) => line.includes("background step failed: job poll")), "the failure is logged");
      assert.ok(logged.some((line) => line.includes("sweep statement failed")), "the sweep's failure is logged");
      await db.query("ALTER TABLE jobs_away RENAME TO jobs");
      await queue.add("finish", "exec_back");
      for (let i = 0; i < 50 && finished.length === 0; i += 1) await sleep(100);
      assert.deepEqual(finished, ["exec_back"], "the queue polls on");
    } finally {
      process.stderr.write = stderr;
      process.off("unhandledRejection", onRejection);
    }
  });

  it("renews a running job's lock, so a job longer than the lock is never taken twice", async () => {
    let calls = 0;
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    queue = new LocalJobQueue(db);
    const handlers = {
      finish: async () => {
        calls += 1;
        await blocked;
      },
      execute: async () => undefined,
      sweep: async () => undefined,
    };
    await queue.add("finish", "exec_long");
    await queue.runDue(handlers);
    assert.equal(calls, 1);
    // The lock runs out, as it would after LOCK_SECS of a creator's work...
    await db.query("UPDATE jobs SET locked_until = clock_timestamp() - interval '1 second'");
    // ...but the renewal, which runs every few seconds while the job runs, pushes it back.
    await queue.renewLocks();
    const { rows } = await db.query<{ left_secs: number }>(
      "SELECT extract(epoch FROM locked_until - clock_timestamp())::float AS left_secs FROM jobs",
    );
    assert.ok(rows[0]!.left_secs > 30, `the lock has ${rows[0]!.left_secs} s left`);
    await queue.runDue(handlers);
    assert.equal(calls, 1, "the running job was not taken again");
    release();
  });
});
