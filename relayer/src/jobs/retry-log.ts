// A job that waits (its transaction not landed yet, say) is no failure: its reason is a debug
// line of the relayer's log, written only at LOG_LEVEL debug or trace.
import type { Logger } from "@agent-market/service";

/** Called for each run of a job that ended waiting, before it is run again after `delay_ms`. */
export type RetryLog = (job_id: string, reason: string, delay_ms: number) => void;

export const NO_RETRY_LOG: RetryLog = () => undefined;

export function retryLog(logger: Logger): RetryLog {
  if (!logger.isLevelEnabled("debug")) return NO_RETRY_LOG;
  return (job_id, reason, delay_ms) => logger.debug({ job: job_id, reason, delay_ms }, "job waits, runs again");
}
