import type { CreatedApiKey } from "@agent-market/client";

import { CopyButton } from "./CopyButton.js";

/** The key's value, shown this once, with how to keep it. */
export function NewKeySecret({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  return (
    <section className="card secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Your new key “{created.name}”</h2>
      <p>
        <strong>This is the only time the key is shown.</strong> Copy it now: the marketplace keeps only a hash of it.
      </p>
      <div className="secret-row">
        <code data-testid="new-key-secret">{created.secret}</code>
        <CopyButton text={created.secret} label="Copy key" autoFocus />
      </div>
      <ul className="advice">
        <li>Keep it in an environment variable (for example AGENT_MARKET_API_KEY), never in source code or a repository.</li>
        <li>Use one key per environment and per server, so one can be revoked without stopping the others.</li>
        <li>If it is ever exposed, revoke it here at once and generate a new one.</li>
      </ul>
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}
