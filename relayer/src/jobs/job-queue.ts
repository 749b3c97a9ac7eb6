// The relayer's background jobs: finishing executions (confirming settlements and refunds,
// rebroadcasting, re-signing after expiry), running async executions, and the sweep that finishes
// executions whose relayer died, refunds escrows past their deadline and closes receipts past
// their dispute window. Production runs them on BullMQ over Redis; the embedded marketplace runs
// the same handlers in-process, their state in PostgreSQL. Job ids are idempotent: adding a job
// that is already waiting does nothing.

export type JobName = "finish" | "execute";

export interface JobHandlers {
  /** Throws to be retried later (with backoff). */
  finish(execution_id: string): Promise<void>;
  execute(execution_id: string): Promise<void>;
  /** Runs every few seconds on some instance. */
  sweep(): Promise<void>;
}

export interface JobQueue {
  add(name: JobName, execution_id: string, delay_ms?: number): Promise<void>;
  start(handlers: JobHandlers): Promise<void>;
  /** Rejects if the queue's store (Redis, or PostgreSQL in-process) does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Retry delays: quick at first (a slot or two), then backing off to 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 200 * 2 ** Math.max(0, attempt - 1));
}

export const SWEEP_INTERVAL_MS = 2_000;
