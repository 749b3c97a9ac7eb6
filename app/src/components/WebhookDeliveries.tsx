import type { WebhookDelivery } from "@agent-market/client";
import { useEffect } from "react";

import { useApp } from "../app-context.js";
import { useLoad } from "../data/use-load.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { Empty, Loading } from "./Status.js";
import { timeText } from "./time.js";

/** How the last attempt went, in words. */
function lastAttempt(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (last === undefined) return "not sent yet";
  return `${last.status_code === null ? last.error ?? "no answer" : `HTTP ${last.status_code}`} in ${last.duration_ms} ms`;
}

// Deliveries live only in the relayer (the indexer's live feed knows nothing of them): read again
// while one is pending, at its next attempt, at least a second and at most half a minute apart.
const MIN_POLL_MS = 1_000;
const MAX_POLL_MS = 30_000;

function nextPollMs(deliveries: readonly WebhookDelivery[], now = Date.now()): number | null {
  const due = deliveries.filter((d) => d.status === "pending").map((d) => (d.next_attempt_at === null ? 0 : Date.parse(d.next_attempt_at) - now));
  return due.length === 0 ? null : Math.min(Math.max(Math.min(...due), MIN_POLL_MS), MAX_POLL_MS);
}

/**
 * The endpoint's latest deliveries, each with its attempts, followed until none is pending.
 * `sent` counts the test events sent from the screen: each one is read at once.
 */
export function WebhookDeliveries({ webhookId, sent }: { webhookId: string; sent: number }) {
  const { session } = useApp();
  const [deliveries, reload] = useLoad(() => session.webhooks.deliveries(webhookId, { limit: 50 }), [session, webhookId, sent]);
  useEffect(() => {
    if (deliveries.state !== "ready") return;
    const wait = nextPollMs(deliveries.value.data);
    if (wait === null) return;
    const timer = setTimeout(reload, wait);
    return () => clearTimeout(timer);
  }, [deliveries, reload]);
  return (
    <div data-testid="webhook-deliveries">
      <div className="row">
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      {deliveries.state === "loading" && <Loading what="the deliveries" />}
      {deliveries.state === "error" && <ErrorNotice error={deliveries.error} onRetry={reload} />}
      {deliveries.state === "ready" && deliveries.value.data.length === 0 && <Empty>Nothing sent yet.</Empty>}
      {deliveries.state === "ready" && deliveries.value.data.length > 0 && (
        <div className="table-wrap" tabIndex={0} aria-label="Deliveries">
          <table className="stack-narrow">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Execution</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">Attempts</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.value.data.map((delivery) => (
                <tr key={delivery.id} data-testid="webhook-delivery">
                  <th scope="row">
                    <code>{delivery.event}</code>
                  </th>
                  <td className="mono" data-label="Execution">{delivery.execution_id ?? "—"}</td>
                  <td data-label="Status">
                    <span className={`badge badge-delivery-${delivery.status}`} data-testid="webhook-delivery-status">
                      {delivery.status}
                    </span>
                  </td>
                  <td className="num" data-label="Attempts">{delivery.attempt_count}</td>
                  <td data-label="Last attempt">{lastAttempt(delivery)}</td>
                  <td data-label="Next attempt">{delivery.next_attempt_at === null ? "—" : timeText(delivery.next_attempt_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
