// JobQueue on BullMQ (Redis): durable, shared by every relayer instance; a job id names its
// execution, so the same job is never queued twice while it waits.
import { Queue, Worker, type Job } from "bullmq";

import { reportBackgroundError } from "../background.js";
import { redisOptions } from "../redis-options.js";
import { retryDelayMs, SWEEP_INTERVAL_MS, type JobHandlers, type JobName, type JobQueue } from "./job-queue.js";

export class BullMqJobQueue implements JobQueue {
  private readonly queue: Queue;
  private worker: Worker | undefined;

  constructor(
    private readonly redis_url: string,
    private readonly queue_name: string,
    private readonly concurrency = 32,
  ) {
    this.queue = new Queue(queue_name, { connection: connectionOf(redis_url) });
    // While Redis is away the connection retries by itself; GET /v1/health reports it meanwhile.
    this.queue.on("error", () => undefined);
  }

  async add(name: JobName, execution_id: string, delay_ms = 0): Promise<void> {
    await this.queue.add(
      name,
      { execution_id },
      {
        jobId: `${name}-${execution_id}`,
        delay: delay_ms,
        attempts: 1_000,
        backoff: { type: "custom" },
        removeOnComplete: true,
        removeOnFail: 1_000,
      },
    );
  }

  async start(handlers: JobHandlers): Promise<void> {
    this.worker = new Worker(
      this.queue_name,
      async (job: Job<{ execution_id?: string }>) => {
        if (job.name === "sweep") return handlers.sweep();
        const id = job.data.execution_id!;
        return job.name === "execute" ? handlers.execute(id) : handlers.finish(id);
      },
      {
        connection: connectionOf(this.redis_url),
        concurrency: this.concurrency,
        settings: { backoffStrategy: (attempts: number) => retryDelayMs(attempts) },
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
