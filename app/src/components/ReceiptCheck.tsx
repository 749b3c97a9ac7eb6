import type { Execution } from "@agent-market/client";
import type { ReceiptVerification } from "@agent-market/client/verify";
import { useEffect, useState } from "react";

import { useApp } from "../app-context.js";
import { chainRpcUrl } from "../data/config.js";
import { verifyInBrowser } from "../data/verify.js";
import { ErrorNotice } from "./ErrorNotice.js";

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

  async function run() {
    setBusy(true);
    setError(null);
    try {
      setResult(await verifyInBrowser(execution, { rpcUrl: chainRpcUrl(config, execution.network), ...(signingKey ? { signingKey } : {}), ...(request ? { request } : {}) }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  useEffect(() => {
    if (auto) void run();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [auto, execution.id]);

  if (execution.receipt === null) return <p className="muted">No receipt: the execution did not succeed.</p>;
  return (
    <div className="receipt" data-testid="receipt-check">
      {result === null && !busy && (
        <button type="button" onClick={() => void run()}>
          Verify the receipt in this browser
        </button>
      )}
      {busy && <p role="status">Verifying the receipt…</p>}
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
