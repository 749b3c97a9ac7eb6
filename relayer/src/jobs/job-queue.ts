// The relayer's background jobs: finishing executions (confirming settlements and refunds,
// rebroadcasting, re-signing after expiry), finishing subscription purchases, running async
// executions, and the sweep that finishes executions whose relayer died, refunds escrows past
// their deadline and closes receipts past their dispute window. Production runs them on BullMQ
// over Redis; the embedded marketplace runs the same handlers in-process, their state in
// PostgreSQL. Job ids are idempotent: adding a job that is already waiting does nothing.

export type JobName = "finish" | "finish_purchase" | "execute";

/**
 * How a run of a job ended. `retry`: it waits on something that is no failure (a transaction
 * not landed or not confirmed yet, a refund on its way) and runs again after the same backoff as
 * a failed run; `reason` goes to the debug log only. A real failure is thrown: it is retried with
 * that backoff too, and recorded as the queue records failures.
 */
export type JobOutcome = { kind: "done" } | { kind: "retry"; reason: string };

export const JOB_DONE: JobOutcome = { kind: "done" };

export function retryJob(reason: string): JobOutcome {
  return { kind: "retry", reason };
}

export interface JobHandlers {
  /** Moves an execution on from wherever its row stands. */
  finish(execution_id: string): Promise<JobOutcome>;
  /** Ends a subscription purchase whose send outcome was unknown. */
  finish_purchase(purchase_id: string): Promise<JobOutcome>;
  execute(execution_id: string): Promise<JobOutcome>;
  /** Runs every few seconds on some instance. */
  sweep(): Promise<void>;
}

export interface JobQueue {
  /** `id`: the execution's, or the purchase's for finish_purchase. */
  add(name: JobName, id: string, delay_ms?: number): Promise<void>;
  start(handlers: JobHandlers): Promise<void>;
  /** Rejects if the queue's store (Redis, or PostgreSQL in-process) does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Retry delays: quick at first (a slot or two), then backing off to 30 s. `attempt` counts from 1. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 200 * 2 ** Math.max(0, attempt - 1));
}

export const SWEEP_INTERVAL_MS = 2_000;
