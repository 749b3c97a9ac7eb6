import type { Execution } from "@agent-market/client";
import type { ReceiptVerification } from "@agent-market/client/verify";
import { useEffect, useRef, useState } from "react";

import { useApp } from "../app-context.js";
import { chainRpcUrl } from "../data/config.js";
import { verifyInBrowser } from "../data/verify.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { checkDetail, checkName } from "./receipt-check-words.js";

const PENDING_RETRY_MS = 1_000;
/**
 * How long a settlement may stay unconfirmed before the page stops looking by itself. A settlement
 * is confirmed a slot or so after the relayer's answer; one still unconfirmed after this is held up
 * (a lagging RPC node, a congested cluster), and polling on would only load the RPC: the user
 * decides when to look again.
 */
export const PENDING_LIMIT_MS = 30_000;

/** Verifies an execution's receipt here, without trusting the relayer, and lists every check. */
export function ReceiptCheck({
  execution,
  signingKey,
  request,
  auto = false,
}: {
  execution: Execution;
  signingKey?: string;
  request?: { task: string; parameters: Record<string, unknown> };
  auto?: boolean;
}) {
  const { config } = useApp();
  const [result, setResult] = useState<ReceiptVerification | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState(false);
  const [unconfirmed, setUnconfirmed] = useState(false);
  const retry = useRef<ReturnType<typeof setTimeout> | null>(null);
  /** When this round of looking began: a click on "Check again" starts a new one. */
  const since = useRef(0);
  /** Cleared when the receipt leaves the page: a check answered after that schedules no other. */
  const shown = useRef(true);

  async function run(fresh = true) {
    if (fresh) since.current = Date.now();
    setBusy(true);
    setError(null);
    setUnconfirmed(false);
    try {
      const checked = await verifyInBrowser(execution, { rpcUrl: chainRpcUrl(config, execution.network), indexerUrl: config.indexer_graphql_url, ...(signingKey ? { signingKey } : {}), ...(request ? { request } : {}) });
      if (!shown.current) return;
      if (checked.state === "pending" && Date.now() - since.current < PENDING_LIMIT_MS) {
        // The settlement is on chain but not yet confirmed: say so and look again shortly.
        setPending(true);
        retry.current = setTimeout(() => void run(false), PENDING_RETRY_MS);
      } else if (checked.state === "pending") {
        setPending(false);
        setUnconfirmed(true);
      } else {
        setPending(false);
        setResult(checked.verification);
      }
    } catch (e) {
      // Nothing is scheduled after an error: the button offers to look again.
      setPending(false);
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  useEffect(() => {
    shown.current = true;
    if (auto) void run();
    return () => {
      shown.current = false;
      if (retry.current !== null) clearTimeout(retry.current);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [auto, execution.id]);

  if (execution.receipt === null) return <p className="muted">No receipt: the execution did not succeed.</p>;
  return (
    <div className="receipt" data-testid="receipt-check">
      {result === null && !busy && !pending && !unconfirmed && (
        <button type="button" onClick={() => void run()}>
          Verify the receipt in this browser
        </button>
      )}
      <div role="status">
        {pending ? (
          <p data-testid="receipt-pending">Settlement not yet confirmed on chain: the receipt is checked again as soon as it is.</p>
        ) : (
          busy && <p>Verifying the receipt…</p>
        )}
        {unconfirmed && (
          <p data-testid="receipt-unconfirmed">
            The settlement could not be confirmed on chain yet (checked for {PENDING_LIMIT_MS / 1000} s), so the receipt cannot be checked yet. This does not mean it
            failed: check again in a moment.
          </p>
        )}
      </div>
      {unconfirmed && (
        <button type="button" onClick={() => void run()}>
          Check again
        </button>
      )}
      {error !== null && <ErrorNotice error={error} />}
      {result !== null && (
        <>
          <p className={result.ok ? "ok" : "bad"} data-testid="receipt-verdict">
            {result.ok ? "✓ Receipt verified" : "✗ Receipt did not verify"} ({result.checks.filter((c) => c.ok).length}/{result.checks.length} checks)
          </p>
          <details>
            <summary>Checks</summary>
            <ul className="checks">
              {result.checks.map((check) => (
                <li key={check.name} className={check.ok ? "ok" : "bad"}>
                  <span aria-hidden="true">{check.ok ? "✓" : "✗"}</span> <strong title={check.name}>{checkName(check.name)}</strong>: {checkDetail(check.detail)}
                </li>
              ))}
            </ul>
          </details>
        </>
      )}
    </div>
  );
}
