// A queued job's run, the same for both queues: its name (as a newer relayer reads it) picks
// the handler.
import type { JobHandlers, JobName, JobOutcome } from "./job-queue.js";
import { upgradedJobName } from "./legacy-jobs.js";

export function runJob(handlers: JobHandlers, name: JobName, id: string): Promise<JobOutcome> {
  const current = upgradedJobName(name, id);
  switch (current) {
    case "finish":
      return handlers.finish(id);
    case "finish_purchase":
      return handlers.finish_purchase(id);
    case "execute":
      return handlers.execute(id);
    default:
      // A job name this relayer does not know (a newer one queued it): a failure, kept and retried.
      return Promise.reject(new Error(`unknown job ${String(current satisfies never)}`));
  }
}
