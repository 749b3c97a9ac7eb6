import type { Execution } from "@agent-market/client";
import type { ReceiptVerification } from "@agent-market/client/verify";
import { useEffect, useRef, useState } from "react";

import { useApp } from "../app-context.js";
import { chainRpcUrl } from "../data/config.js";
import { verifyInBrowser } from "../data/verify.js";
import { ErrorNotice } from "./ErrorNotice.js";

const PENDING_RETRY_MS = 1_000;

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
  const retry = useRef<ReturnType<typeof setTimeout> | null>(null);

  async function run() {
    setBusy(true);
    setError(null);
    try {
      const checked = await verifyInBrowser(execution, { rpcUrl: chainRpcUrl(config, execution.network), ...(signingKey ? { signingKey } : {}), ...(request ? { request } : {}) });
      if (checked.state === "pending") {
        // The settlement is on chain but not yet confirmed: say so and look again shortly.
        setPending(true);
        retry.current = setTimeout(() => void run(), PENDING_RETRY_MS);
      } else {
        setPending(false);
        setResult(checked.verification);
      }
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  useEffect(() => {
    if (auto) void run();
    return () => {
      if (retry.current !== null) clearTimeout(retry.current);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [auto, execution.id]);

  if (execution.receipt === null) return <p className="muted">No receipt: the execution did not succeed.</p>;
  return (
    <div className="receipt" data-testid="receipt-check">
      {result === null && !busy && !pending && (
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
      </div>
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
                  <span aria-hidden="true">{check.ok ? "✓" : "✗"}</span> <code>{check.name}</code> {check.detail}
                </li>
              ))}
            </ul>
          </details>
        </>
      )}
    </div>
  );
}
