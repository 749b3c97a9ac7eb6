// The BullMQ job queue against a real Redis: a job that waits runs again after the same backoff as
// one that failed, and BullMQ records no failure for it; each job name has its handler, and a
// purchase's `finish` queued by an older relayer runs as its finish_purchase.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { Queue } from "bullmq";

import { BullMqJobQueue } from "../src/jobs/bullmq-queue.js";
import { JOB_DONE, retryDelayMs, retryJob, type JobHandlers, type JobOutcome } from "../src/jobs/job-queue.js";
import { redisOptions } from "../src/redis-options.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe("BullMqJobQueue", () => {
  let name: string;
  let queue: BullMqJobQueue | undefined;
  /** The same queue as seen from outside: what BullMQ recorded of each job. */
  let inspect: Queue;

  beforeEach(() => {
    name = `jobs-test-${randomBytes(6).toString("hex")}`;
    inspect = new Queue(name, { connection: redisOptions(REDIS_URL) });
  });
  afterEach(async () => {
    await queue?.close();
    queue = undefined;
    await inspect.obliterate({ force: true });
    await inspect.close();
  });

  async function waitFor(done: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 200 && !done(); i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(done(), what);
  }

  it("runs a waiting job again after the backoff of a failed one, recording no failure; a throw is still a failure", async () => {
    const runs: Array<{ at_ms: number; attempts_made: number; failed_reason: string | undefined }> = [];
    const outcomes: Array<() => JobOutcome> = [
      () => retryJob("not landed yet"),
      () => {
        throw new Error("rpc unreachable");
      },
      () => retryJob("waiting for confirmation"),
      () => JOB_DONE,
    ];
    const retries: Array<[string, string, number]> = [];
    queue = new BullMqJobQueue(REDIS_URL, name, 4, (job_id, reason, delay_ms) => retries.push([job_id, reason, delay_ms]));
    const handlers: JobHandlers = {
      finish: async (id) => {
        const job = await inspect.getJob(`finish-${id}`);
        runs.push({ at_ms: Date.now(), attempts_made: job!.attemptsMade, failed_reason: job!.failedReason || undefined });
        return outcomes.shift()!();
      },
      finish_purchase: async () => assert.fail("an execution's job"),
      execute: async () => assert.fail("an execution's finish"),
      sweep: async () => undefined,
    };
    await queue.start(handlers);
    await queue.add("finish", "exec_wait");
    await waitFor(() => runs.length === 4, "four runs");
    // Only the thrown run counts as a failed attempt, and its reason is BullMQ's failedReason.
    assert.deepEqual(
      runs.map(({ attempts_made, failed_reason }) => ({ attempts_made, failed_reason })),
      [
        { attempts_made: 0, failed_reason: undefined },
        { attempts_made: 0, failed_reason: undefined },
        { attempts_made: 1, failed_reason: "rpc unreachable" },
        { attempts_made: 1, failed_reason: "rpc unreachable" },
      ],
    );
    // Each run waited the backoff of its run number, the wait and the throw alike.
    for (let i = 1; i < runs.length; i += 1) {
      const gap_ms = runs[i]!.at_ms - runs[i - 1]!.at_ms;
      assert.ok(gap_ms >= retryDelayMs(i) - 5 && gap_ms < retryDelayMs(i) + 1_000, `run ${i + 1} came ${gap_ms} ms after run ${i}`);
    }
    assert.deepEqual(retries, [
      ["finish-exec_wait", "not landed yet", retryDelayMs(1)],
      ["finish-exec_wait", "waiting for confirmation", retryDelayMs(3)],
    ]);
    assert.equal(await inspect.getFailedCount(), 0);
  });

  it("runs finish_purchase, finish and execute jobs by their own handlers, and an older relayer's finish of a purchase as finish_purchase", async () => {
    const ran: string[] = [];
    queue = new BullMqJobQueue(REDIS_URL, name, 4);
    // The job as a relayer before finish_purchase added it for a purchase.
    await inspect.add("finish", { execution_id: "sub_old" }, { jobId: "finish-sub_old", attempts: 1_000, backoff: { type: "custom" } });
    await queue.add("finish_purchase", "sub_new");
    await queue.add("finish", "exec_1");
    await queue.add("execute", "exec_2");
    await queue.start({
      finish: async (id) => (ran.push(`finish ${id}`), JOB_DONE),
      finish_purchase: async (id) => (ran.push(`finish_purchase ${id}`), JOB_DONE),
      execute: async (id) => (ran.push(`execute ${id}`), JOB_DONE),
      sweep: async () => undefined,
    });
    await waitFor(() => ran.length === 4, "four jobs ran");
    assert.deepEqual(ran.sort(), ["execute exec_2", "finish exec_1", "finish_purchase sub_new", "finish_purchase sub_old"]);
  });
});
