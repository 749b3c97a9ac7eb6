// JobQueue in-process, its jobs in PostgreSQL (the `jobs` table): what the embedded marketplace
// runs instead of BullMQ. Jobs survive a restart; a job a dead process had locked is taken again
// when its lock expires. A running job's lock is renewed while it runs, however long (a creator
// may take 900 s): no poll retakes it meanwhile. A failing statement fails that round only. A run
// that throws records its error in `last_error`; one that waits (a `retry` outcome) clears it:
// either way the job runs again after retryDelayMs of its attempts.
import { reportBackgroundError } from "@agent-market/service";

import type { Db } from "../db/database.js";
import { retryDelayMs, SWEEP_INTERVAL_MS, type JobHandlers, type JobName, type JobQueue } from "./job-queue.js";
import { NO_RETRY_LOG, type RetryLog } from "./retry-log.js";
import { runJob } from "./run-job.js";

const POLL_MS = 100;
const LOCK_SECS = 60;
/** A running job's lock is renewed this often, well within LOCK_SECS. */
const RENEW_MS = 10_000;

export class LocalJobQueue implements JobQueue {
  private timer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private running = new Set<Promise<void>>();
  /** Ids of the jobs this process runs now. */
  private readonly runningIds = new Set<string>();
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly concurrency = 16,
    private readonly logRetry: RetryLog = NO_RETRY_LOG,
  ) {}

  /** The job's data keeps the key `execution_id` for a purchase's id too, as older relayers wrote it. */
  async add(name: JobName, id: string, delay_ms = 0): Promise<void> {
    await this.db.query(
      `INSERT INTO jobs (id, name, data, run_at) VALUES ($1, $2, $3, clock_timestamp() + make_interval(secs => $4))
       ON CONFLICT (id) DO NOTHING`,
      [`${name}-${id}`, name, { execution_id: id }, delay_ms / 1000],
    );
  }

  async start(handlers: JobHandlers): Promise<void> {
    const tick = async () => {
      if (this.closed) return;
      await this.runDue(handlers).catch((error: unknown) => reportBackgroundError("job poll", error));
      if (!this.closed) this.timer = setTimeout(() => void tick(), POLL_MS);
    };
    const sweep = async () => {
      if (this.closed) return;
      await handlers.sweep().catch((error: unknown) => reportBackgroundError("sweep", error));
      if (!this.closed) this.sweepTimer = setTimeout(() => void sweep(), SWEEP_INTERVAL_MS);
    };
    const renew = async () => {
      if (this.closed) return;
      await this.renewLocks().catch((error: unknown) => reportBackgroundError("job lock renewal", error));
      if (!this.closed) this.renewTimer = setTimeout(() => void renew(), RENEW_MS);
    };
    this.timer = setTimeout(() => void tick(), 0);
    this.sweepTimer = setTimeout(() => void sweep(), 0);
    this.renewTimer = setTimeout(() => void renew(), RENEW_MS);
  }

  /** Pushes back the lock of every job this process still runs. */
  async renewLocks(): Promise<void> {
    if (this.runningIds.size === 0) return;
    await this.db.query(
      "UPDATE jobs SET locked_until = clock_timestamp() + make_interval(secs => $2) WHERE id = ANY($1::text[])",
      [[...this.runningIds], LOCK_SECS],
    );
  }

  async runDue(handlers: JobHandlers): Promise<void> {
    const free = this.concurrency - this.running.size;
    if (free <= 0) return;
    const { rows } = await this.db.query<{ id: string; name: JobName; data: { execution_id: string }; attempts: number }>(
      `UPDATE jobs SET locked_until = clock_timestamp() + make_interval(secs => $2), attempts = attempts + 1
       WHERE id IN (SELECT id FROM jobs WHERE run_at <= clock_timestamp()
                      AND (locked_until IS NULL OR locked_until < clock_timestamp())
                    ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id, name, data, attempts`,
      [free, LOCK_SECS],
    );
    for (const job of rows) {
      this.runningIds.add(job.id);
      const run = runJob(handlers, job.name, job.data.execution_id)
        .then(
          (outcome) => {
            if (outcome.kind === "done") return this.db.query("DELETE FROM jobs WHERE id = $1", [job.id]);
            this.logRetry(job.id, outcome.reason, retryDelayMs(job.attempts));
            return this.runAgainLater(job.id, job.attempts, null);
          },
          (error: unknown) => this.runAgainLater(job.id, job.attempts, String((error as Error).message ?? error)),
        )
        .then(
          () => undefined,
          (error: unknown) => reportBackgroundError("job bookkeeping", error, { job: job.id }),
        )
        .finally(() => {
          this.running.delete(run);
          this.runningIds.delete(job.id);
        });
      this.running.add(run);
    }
  }

  /** Unlocks a job to run again after the backoff of its `attempts`; `last_error` null when it waited. */
  private runAgainLater(id: string, attempts: number, last_error: string | null) {
    return this.db.query(
      `UPDATE jobs SET locked_until = NULL, last_error = $2,
         run_at = clock_timestamp() + make_interval(secs => $3) WHERE id = $1`,
      [id, last_error, retryDelayMs(attempts) / 1000],
    );
  }

  async ping(): Promise<void> {
    await this.db.query("SELECT 1");
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.sweepTimer);
    clearTimeout(this.renewTimer);
    await Promise.all(this.running);
  }
}
