import type { CreatedWebhookEndpoint, WebhookEventType } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { ErrorNotice } from "./ErrorNotice.js";

export const WEBHOOK_EVENTS: readonly (readonly [WebhookEventType, string])[] = [
  ["execution.succeeded", "an execution succeeded (settled)"],
  ["execution.refunded", "an execution was refunded"],
  ["execution.failed", "an execution failed before its escrow (nothing charged)"],
  ["dispute.opened", "a dispute was opened"],
  ["dispute.resolved", "a dispute was resolved"],
];

/** Add an endpoint: its URL and the events it wants (the executions' three by default). */
export function NewWebhookForm({ onCreated }: { onCreated: (endpoint: CreatedWebhookEndpoint) => void }) {
  const { session } = useApp();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEventType[]>(["execution.succeeded", "execution.refunded", "execution.failed"]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await session.webhooks.create({ url: url.trim(), events });
      setUrl("");
      onCreated(created);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  const toggle = (name: WebhookEventType, on: boolean) =>
    setEvents((current) => (on ? [...current, name] : current.filter((e) => e !== name)));

  return (
    <form className="card form" onSubmit={(e) => void submit(e)} aria-label="Add a webhook endpoint">
      <h2>Add an endpoint</h2>
      <label className="wide">
        URL
        <input required type="url" maxLength={2048} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/agent-market/webhooks" />
      </label>
      <fieldset>
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map(([name, words]) => (
          <label key={name} className="check">
            <input type="checkbox" checked={events.includes(name)} onChange={(e) => toggle(name, e.target.checked)} />
            <span>
              <code>{name}</code>: {words}
            </span>
          </label>
        ))}
      </fieldset>
      <button type="submit" className="primary" disabled={busy || events.length === 0}>
        {busy ? "Adding…" : "Add endpoint"}
      </button>
      {error !== null && <ErrorNotice error={error} />}
    </form>
  );
}
