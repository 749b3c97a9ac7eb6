// JobQueue on BullMQ (Redis): durable, shared by every relayer instance; a job id names its
// execution, so the same job is never queued twice while it waits. A run that throws fails as
// BullMQ fails jobs (a failed attempt with its failedReason and stack, the `failed` event) and is
// retried with backoff; one that waits (a `retry` outcome) is moved to the delayed set with the
// same delay and counts as no failed attempt. The delay is retryDelayMs of the job's runs so far
// (`attemptsStarted`), waits and failures alike, so either way a job backs off as it always has,
// and is left failed after MAX_RUNS runs.
import { DelayedError, Queue, UnrecoverableError, Worker, type Job, type MinimalJob } from "bullmq";
import { reportBackgroundError } from "@agent-market/service";

import { redisOptions } from "../redis-options.js";
import { retryDelayMs, SWEEP_INTERVAL_MS, type JobHandlers, type JobName, type JobQueue } from "./job-queue.js";
import { NO_RETRY_LOG, type RetryLog } from "./retry-log.js";
import { runJob } from "./run-job.js";

/** Runs of one job, waits and failures together, after which it is left failed. */
const MAX_RUNS = 1_000;

export class BullMqJobQueue implements JobQueue {
  private readonly queue: Queue;
  private worker: Worker | undefined;

  constructor(
    private readonly redis_url: string,
    private readonly queue_name: string,
    private readonly concurrency = 32,
    private readonly logRetry: RetryLog = NO_RETRY_LOG,
  ) {
    this.queue = new Queue(queue_name, { connection: connectionOf(redis_url) });
    // While Redis is away the connection retries by itself; GET /v1/health reports it meanwhile.
    this.queue.on("error", () => undefined);
  }

  /** The job's data keeps the key `execution_id` for a purchase's id too, as older relayers wrote it. */
  async add(name: JobName, id: string, delay_ms = 0): Promise<void> {
    await this.queue.add(
      name,
      { execution_id: id },
      {
        jobId: `${name}-${id}`,
        delay: delay_ms,
        attempts: MAX_RUNS,
        backoff: { type: "custom" },
        removeOnComplete: true,
        removeOnFail: 1_000,
      },
    );
  }

  async start(handlers: JobHandlers): Promise<void> {
    this.worker = new Worker(
      this.queue_name,
      async (job: Job<{ execution_id?: string }>, token?: string) => {
        if (job.name === "sweep") return handlers.sweep();
        const outcome = await runJob(handlers, job.name as JobName, job.data.execution_id!);
        if (outcome.kind === "done") return;
        if (job.attemptsStarted >= MAX_RUNS) throw new UnrecoverableError(`still waiting after ${MAX_RUNS} runs: ${outcome.reason}`);
        const delay_ms = retryDelayMs(job.attemptsStarted);
        this.logRetry(job.id!, outcome.reason, delay_ms);
        await job.moveToDelayed(Date.now() + delay_ms, token);
        // Tells the worker the job was moved on by hand: neither completed nor failed.
        throw new DelayedError();
      },
      {
        connection: connectionOf(this.redis_url),
        concurrency: this.concurrency,
        settings: {
          // BullMQ passes the Job itself; -1 retries no more.
          backoffStrategy: (attempts_made: number, _type?: string, _error?: Error, job?: MinimalJob) => {
            const runs = (job as Job | undefined)?.attemptsStarted ?? attempts_made;
            return runs >= MAX_RUNS ? -1 : retryDelayMs(runs);
          },
        },
      },
    );
    this.worker.on("error", (error) => reportBackgroundError("job worker", error));
    await this.queue.upsertJobScheduler("sweep", { every: SWEEP_INTERVAL_MS }, { name: "sweep", data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } });
  }

  async ping(): Promise<void> {
    await this.queue.count();
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}

function connectionOf(redis_url: string) {
  return {
    ...redisOptions(redis_url),
    // BullMQ workers block on Redis; their commands must wait out a reconnection rather than fail.
    maxRetriesPerRequest: null,
  };
}
