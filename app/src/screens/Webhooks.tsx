import type { CreatedWebhookEndpoint, WebhookEndpoint } from "@agent-market/client";
import { useRef, useState } from "react";

import { useApp } from "../app-context.js";
import { ConfirmAction } from "../components/ConfirmAction.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { NewWebhookForm } from "../components/NewWebhookForm.js";
import { Empty, Loading } from "../components/Status.js";
import { timeText } from "../components/time.js";
import { WebhookDeliveries } from "../components/WebhookDeliveries.js";
import { WebhookSecret } from "../components/WebhookSecret.js";
import { useLoad } from "../data/use-load.js";

/** The wallet's webhook endpoints: add one (its secret shown once), test it, follow its deliveries, delete it. */
export function WebhooksScreen() {
  const { session } = useApp();
  const [endpoints, reload, setEndpoints] = useLoad(async () => (await session.webhooks.list()).data, [session]);
  const [created, setCreated] = useState<CreatedWebhookEndpoint | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  /** The endpoint whose Delete is being confirmed. */
  const [deleting, setDeleting] = useState<string | null>(null);
  const deleteButtons = useRef(new Map<string, HTMLButtonElement>());
  /** Test events sent: the open deliveries list reads each at once. */
  const [sent, setSent] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const list = endpoints.state === "ready" ? endpoints.value : [];

  async function act(work: () => Promise<void>) {
    setError(null);
    setNotice(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    }
  }
  const test = (endpoint: WebhookEndpoint) =>
    act(async () => {
      await session.webhooks.test(endpoint.id);
      setNotice(`A webhook.test event is on its way to ${endpoint.url}.`);
      setOpen(endpoint.id);
      setSent((n) => n + 1);
    });
  const remove = (endpoint: WebhookEndpoint) =>
    act(async () => {
      setDeleting(null);
      await session.webhooks.delete(endpoint.id);
      setEndpoints(list.filter((e) => e.id !== endpoint.id));
      if (open === endpoint.id) setOpen(null);
    });

  return (
    <>
      <h1>Webhooks</h1>
      <p className="muted">
        The relayer sends your executions&apos; and disputes&apos; events to these URLs, signed with each endpoint&apos;s secret, and retries
        for about a day until your receiver answers 2xx.
      </p>
      {created !== null && <WebhookSecret created={created} onDone={() => setCreated(null)} />}
      <NewWebhookForm
        onCreated={(endpoint) => {
          setCreated(endpoint);
          const { secret: _secret, ...listed } = endpoint;
          setEndpoints([listed, ...list]);
        }}
      />
      {notice !== null && (
        <div className="notice notice-ok" role="status">
          {notice}
        </div>
      )}
      {error !== null && <ErrorNotice error={error} />}
      <section aria-labelledby="webhooks-title">
        <h2 id="webhooks-title">Your endpoints</h2>
        {endpoints.state === "loading" && <Loading what="your endpoints" />}
        {endpoints.state === "error" && <ErrorNotice error={endpoints.error} onRetry={reload} />}
        {endpoints.state === "ready" && list.length === 0 && <Empty>No endpoints yet: add one above to be told when an execution ends.</Empty>}
        {list.map((endpoint) => (
          <article key={endpoint.id} className="card" data-testid="webhook-endpoint" aria-label={endpoint.url}>
            <p className="mono">{endpoint.url}</p>
            <p className="small">
              {endpoint.events.map((event) => (
                <span key={event} className="badge">
                  {event}
                </span>
              ))}{" "}
              <span className="muted">added {timeText(endpoint.created_at)}</span>
            </p>
            <div className="row">
              <button type="button" onClick={() => void test(endpoint)}>
                Send a test event
              </button>
              <button type="button" aria-expanded={open === endpoint.id} onClick={() => setOpen(open === endpoint.id ? null : endpoint.id)}>
                {open === endpoint.id ? "Hide deliveries" : "Deliveries"}
              </button>
              <button
                ref={(button) => {
                  if (button === null) deleteButtons.current.delete(endpoint.id);
                  else deleteButtons.current.set(endpoint.id, button);
                }}
                type="button"
                className="danger"
                disabled={deleting === endpoint.id}
                aria-expanded={deleting === endpoint.id}
                onClick={() => setDeleting(endpoint.id)}
              >
                Delete
              </button>
            </div>
            {deleting === endpoint.id && (
              <ConfirmAction
                label={`Confirm deleting ${endpoint.url}`}
                question={
                  <>
                    Delete the endpoint <span className="mono wrap">{endpoint.url}</span>? Nothing more is sent to it, and its deliveries are gone.
                  </>
                }
                confirm="Yes, delete it"
                onCancel={() => {
                  setDeleting(null);
                  requestAnimationFrame(() => deleteButtons.current.get(endpoint.id)?.focus());
                }}
                onConfirm={() => void remove(endpoint)}
              />
            )}
            {open === endpoint.id && <WebhookDeliveries webhookId={endpoint.id} sent={sent} />}
          </article>
        ))}
      </section>
    </>
  );
}
