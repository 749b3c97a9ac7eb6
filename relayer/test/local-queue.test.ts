// The in-process job queue: a failing statement in its poll fails that round and never the
// process; a running job keeps its lock however long it runs; a job that waits runs again after
// the same backoff as one that failed, with no error recorded; each job name has its handler,
// and a purchase's `finish` queued by an older relayer runs as its finish_purchase.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { createPool, dropDatabase, ensureDatabase } from "@agent-market/service";

import { migrate, type Db } from "../src/db/database.js";
import { JOB_DONE, retryDelayMs, retryJob, type JobHandlers, type JobOutcome } from "../src/jobs/job-queue.js";
import { upgradedJobName } from "../src/jobs/legacy-jobs.js";
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
    db = createPool(url, { max_connections: 4 });
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
        finish: async (id) => (finished.push(id), JOB_DONE),
        finish_purchase: async () => JOB_DONE,
        execute: async () => JOB_DONE,
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
        return JOB_DONE;
      },
      finish_purchase: async () => JOB_DONE,
      execute: async () => JOB_DONE,
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

  /** The job's row once its run is over (unlocked or gone). */
  async function settled(id: string) {
    for (let i = 0; i < 100; i += 1) {
      const { rows } = await db.query<{ attempts: number; last_error: string | null; locked: boolean; due_in_secs: number }>(
        `SELECT attempts, last_error, locked_until IS NOT NULL AS locked,
                extract(epoch FROM run_at - clock_timestamp())::float AS due_in_secs FROM jobs WHERE id = $1`,
        [id],
      );
      if (!rows[0] || !rows[0].locked) return rows[0];
      await sleep(20);
    }
    throw new Error(`job ${id} still running`);
  }

  it("runs a waiting job again after the backoff of a failed one, recording no error; a throw is still recorded", async () => {
    const outcomes: Array<() => JobOutcome> = [
      () => retryJob("not landed yet"),
      () => {
        throw new Error("rpc unreachable");
      },
      () => retryJob("waiting for confirmation"),
      () => JOB_DONE,
    ];
    const retries: Array<[string, string, number]> = [];
    queue = new LocalJobQueue(db, 16, (job_id, reason, delay_ms) => retries.push([job_id, reason, delay_ms]));
    const handlers: JobHandlers = {
      finish: async () => outcomes.shift()!(),
      finish_purchase: async () => assert.fail("an execution's job"),
      execute: async () => assert.fail("an execution's finish"),
      sweep: async () => undefined,
    };
    await queue.add("finish", "exec_wait");
    const expect = [
      { attempts: 1, last_error: null },
      { attempts: 2, last_error: "rpc unreachable" },
      { attempts: 3, last_error: null },
    ];
    for (const [i, want] of expect.entries()) {
      await queue.runDue(handlers);
      const row = (await settled("finish-exec_wait"))!;
      assert.deepEqual({ attempts: row.attempts, last_error: row.last_error }, want, `run ${i + 1}`);
      const delay_secs = retryDelayMs(want.attempts) / 1000;
      assert.ok(row.due_in_secs <= delay_secs && row.due_in_secs > delay_secs - 0.5, `run ${i + 1} is due again in ${row.due_in_secs} s`);
      await db.query("UPDATE jobs SET run_at = clock_timestamp()");
    }
    await queue.runDue(handlers);
    assert.equal(await settled("finish-exec_wait"), undefined, "done: the job is gone");
    assert.deepEqual(retries, [
      ["finish-exec_wait", "not landed yet", retryDelayMs(1)],
      ["finish-exec_wait", "waiting for confirmation", retryDelayMs(3)],
    ]);
  });

  it("runs finish_purchase, finish and execute jobs by their own handlers", async () => {
    const ran: string[] = [];
    queue = new LocalJobQueue(db);
    const handlers: JobHandlers = {
      finish: async (id) => (ran.push(`finish ${id}`), JOB_DONE),
      finish_purchase: async (id) => (ran.push(`finish_purchase ${id}`), JOB_DONE),
      execute: async (id) => (ran.push(`execute ${id}`), JOB_DONE),
      sweep: async () => undefined,
    };
    await queue.add("finish_purchase", "sub_new");
    await queue.add("finish", "exec_1");
    await queue.add("execute", "exec_2");
    await queue.runDue(handlers);
    for (const id of ["finish_purchase-sub_new", "finish-exec_1", "execute-exec_2"]) assert.equal(await settled(id), undefined, id);
    assert.deepEqual(ran.sort(), ["execute exec_2", "finish exec_1", "finish_purchase sub_new"]);
  });

  it("finishes a purchase whose `finish` job an older relayer queued, by finish_purchase", async () => {
    const ran: string[] = [];
    queue = new LocalJobQueue(db);
    // The row as a relayer before finish_purchase wrote it for a purchase.
    await db.query(
      "INSERT INTO jobs (id, name, data, run_at, attempts, last_error) VALUES ($1, 'finish', $2, clock_timestamp(), 3, 'subscribe not landed yet')",
      ["finish-sub_old", { execution_id: "sub_old" }],
    );
    await queue.runDue({
      finish: async (id) => (ran.push(`finish ${id}`), JOB_DONE),
      finish_purchase: async (id) => (ran.push(`finish_purchase ${id}`), JOB_DONE),
      execute: async (id) => (ran.push(`execute ${id}`), JOB_DONE),
      sweep: async () => undefined,
    });
    assert.equal(await settled("finish-sub_old"), undefined);
    assert.deepEqual(ran, ["finish_purchase sub_old"]);
  });
});

describe("upgradedJobName", () => {
  it("reads a finish of a purchase id as finish_purchase, and leaves every other job as it is", () => {
    assert.equal(upgradedJobName("finish", "sub_3xQ"), "finish_purchase");
    assert.equal(upgradedJobName("finish", "exec_3xQ"), "finish");
    assert.equal(upgradedJobName("finish_purchase", "sub_3xQ"), "finish_purchase");
    assert.equal(upgradedJobName("execute", "exec_3xQ"), "execute");
  });
});
