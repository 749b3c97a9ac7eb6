// Jobs queued by an older relayer. Before `finish_purchase`, a subscription purchase was ended
// by a `finish` job named by the purchase's id, told apart from an execution's by its prefix.
// Such jobs may still wait in Redis or the jobs table when a newer relayer starts: they run as
// `finish_purchase`. Nothing adds them any more.
import { PURCHASE_PREFIX } from "../executions/purchase-id.js";
import type { JobName } from "./job-queue.js";

/** The job a queued one is today: a `finish` of a purchase id is that purchase's `finish_purchase`. */
export function upgradedJobName(name: JobName, id: string): JobName {
  return name === "finish" && id.startsWith(PURCHASE_PREFIX) ? "finish_purchase" : name;
}
