import type { CreatedWebhookEndpoint } from "@agent-market/client";

import { CopyButton } from "./CopyButton.js";

/** The endpoint's signing secret, shown this once. */
export function WebhookSecret({ created, onDone }: { created: CreatedWebhookEndpoint; onDone: () => void }) {
  return (
    <section className="card secret" aria-labelledby="webhook-secret-title">
      <h2 id="webhook-secret-title">Signing secret of {created.url}</h2>
      <p>
        <strong>This is the only time the secret is shown.</strong> Your receiver checks every delivery with it (Standard Webhooks:
        <code> verifyWebhook</code> in @agent-market/client, or any Standard Webhooks library).
      </p>
      <div className="secret-row">
        <code data-testid="webhook-secret">{created.secret}</code>
        <CopyButton text={created.secret} label="Copy secret" autoFocus />
      </div>
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}
