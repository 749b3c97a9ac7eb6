// A job that waits (its transaction not landed yet, say) is no failure: its reason is a debug
// line, in the JSON shape of the relayer's other logs, written only at LOG_LEVEL debug or trace.

/** Called for each run of a job that ended waiting, before it is run again after `delay_ms`. */
export type RetryLog = (job_id: string, reason: string, delay_ms: number) => void;

export const NO_RETRY_LOG: RetryLog = () => undefined;

export function retryLog(log_level: string, stream: NodeJS.WritableStream = process.stdout): RetryLog {
  if (log_level !== "debug" && log_level !== "trace") return NO_RETRY_LOG;
  return (job_id, reason, delay_ms) =>
    void stream.write(`${JSON.stringify({ level: 20, time: Date.now(), msg: "job waits, runs again", job: job_id, reason, delay_ms })}\n`);
}
