import type { ApiKey } from "@agent-market/client";
import { memo, useEffect, useRef, useState } from "react";
import { timeText } from "./time.js";
import { Usdc } from "./Usdc.js";

const IDLE_MS = 30 * 24 * 3600_000;

export function keyHints(key: ApiKey, now = Date.now()): string[] {
  if (key.status !== "active") return [];
  const hints: string[] = [];
  if (key.last_used_at === null) hints.push("never used");
  else if (now - Date.parse(key.last_used_at) > IDLE_MS) hints.push("idle 30 days: revoke it if nothing needs it");
  if (key.spending_cap_usdc === null) hints.push("no spending cap");
  return hints;
}

const date = (iso: string | null) => (iso === null ? "never" : timeText(iso));

export const KeyRow = memo(function KeyRow({ apiKey, onRevoke }: { apiKey: ApiKey; onRevoke: (key: ApiKey) => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  // Focus stays in the row: on Cancel when asked, back on Revoke when cancelled, on the new status once revoked.
  const cancel = useRef<HTMLButtonElement>(null);
  const ask = useRef<HTMLButtonElement>(null);
  const status = useRef<HTMLSpanElement>(null);
  const moved = useRef(false);
  useEffect(() => {
    if (!moved.current) return;
    if (apiKey.status !== "active") status.current?.focus();
    else (confirming ? cancel : ask).current?.focus();
  }, [confirming, apiKey.status]);
  const hints = keyHints(apiKey);
  const stopAsking = () => ((moved.current = true), setConfirming(false));
  return (
    <tr data-testid="key-row" data-key-id={apiKey.id}>
      <th scope="row">
        {apiKey.name}
        <br />
        {hints.map((hint) => (
          <span key={hint} className="hint">
            {hint}
          </span>
        ))}
      </th>
      <td className="mono nowrap" data-label="Key">
        {apiKey.prefix}…{apiKey.last4}
      </td>
      <td data-label="Environment">{apiKey.environment}</td>
      <td data-label="Created">{date(apiKey.created_at)}</td>
      <td data-label="Last used">{date(apiKey.last_used_at)}</td>
      <td className="num" data-label="Executions">{apiKey.execution_count}</td>
      <td className="num" data-label="Spent">
        <Usdc amount={apiKey.spent_usdc} testId="key-spent" />
      </td>
      <td className="num" data-label="Cap">
        {apiKey.spending_cap_usdc === null ? <span className="muted">none</span> : <Usdc amount={apiKey.spending_cap_usdc} testId="key-cap" />}
      </td>
      <td>
        {apiKey.status !== "active" ? (
          <span ref={status} tabIndex={-1} className={`badge badge-${apiKey.status}`}>
            {apiKey.status}
          </span>
        ) : confirming ? (
          <span
            className="confirm"
            role="group"
            aria-label={`Confirm revoking ${apiKey.name}`}
            onKeyDown={(e) => {
              if (e.key === "Escape") stopAsking();
            }}
          >
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={() => {
                setBusy(true);
                void onRevoke(apiKey).finally(() => setBusy(false));
              }}
            >
              {/* The key's name is read out, not shown: the row already shows it, and the button keeps to one line. */}
              Revoke<span className="visually-hidden"> “{apiKey.name}”</span> now
            </button>
            <button ref={cancel} type="button" onClick={stopAsking}>
              Cancel
            </button>
          </span>
        ) : (
          <button ref={ask} type="button" onClick={() => ((moved.current = true), setConfirming(true))} aria-label={`Revoke ${apiKey.name}`}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
});
