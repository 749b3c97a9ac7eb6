import { useContext } from "react";

import { AppContext } from "../app-context.js";
import { explain } from "../data/errors.js";

/** An error in words, with its fix when there is one (every 402 has one). */
export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  // Outside a signed-in dashboard (the sign-in screen) there is no configuration: no faucet to name.
  const e = explain(error, useContext(AppContext)?.config.localnet ?? false);
  return (
    <div className="notice notice-error" role="alert">
      <strong>{e.title}</strong>
      <p>{e.detail}</p>
      {e.fix !== null && (
        <p className="fix">
          <strong>What to do: </strong>
          {e.fix}
          {e.link !== null && (
            <>
              {" "}
              <a href={e.link.href}>{e.link.label}</a>
            </>
          )}
        </p>
      )}
      {(e.code !== null || e.requestId !== null) && (
        <p className="muted small">
          {e.code !== null && <code>{e.code}</code>} {e.requestId !== null && <span>request {e.requestId}</span>}
        </p>
      )}
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
