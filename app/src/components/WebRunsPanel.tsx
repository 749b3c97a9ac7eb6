// The wallet's web runs (runs from this dashboard, charged through its session): their spending
// cap, and a switch that revokes them at once on every relayer (docs/dashboard.md, "Web runs").
// Raising the cap or allowing them again asks the wallet to sign that change: the relayer refuses
// it to the session alone, which a stolen one would be.
import { formatUsdc, parseUsdc } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { useLoad } from "../data/use-load.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { trimUsdc, usdcText } from "./money.js";
import { Loading } from "./Status.js";

export function WebRunsPanel() {
  const { session, network, wallet } = useApp();
  const [webRuns, reload] = useLoad(() => session.wallet.webRuns(network), [session, network]);
  const [cap, setCap] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  // The update is made inside the try: a cap that is not an amount shows as the form's error.
  async function change(update: () => { spending_cap_usdc?: string; enabled?: boolean }) {
    setBusy(true);
    setError(null);
    try {
      const asked = update();
      const current = webRuns.state === "ready" ? webRuns.value : undefined;
      const widens =
        asked.enabled === true ||
        (asked.spending_cap_usdc !== undefined && (current === undefined || parseUsdc(asked.spending_cap_usdc) > parseUsdc(current.spending_cap_usdc)));
      await session.wallet.updateWebRuns({ network, ...asked }, widens ? { signMessage: (message) => wallet.signMessage(message) } : undefined);
      setCap("");
      reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void change(() => ({ spending_cap_usdc: formatUsdc(parseUsdc(cap.trim())) }));
  }

  return (
    <section className="card form" aria-labelledby="web-runs-title">
      <h2 id="web-runs-title">Runs from this dashboard</h2>
      {webRuns.state === "loading" && <Loading what="your web runs" />}
      {webRuns.state === "error" && <ErrorNotice error={webRuns.error} onRetry={reload} />}
      {webRuns.state === "ready" && (
        <>
          <p data-testid="web-runs-state">
            {webRuns.value.enabled ? "Allowed" : "Revoked"}: <span title={`${webRuns.value.spent_usdc} USDC`}>{trimUsdc(webRuns.value.spent_usdc)}</span> of{" "}
            <span title={`${webRuns.value.spending_cap_usdc} USDC`}>{usdcText(webRuns.value.spending_cap_usdc)}</span> spent in{" "}
            {webRuns.value.execution_count} runs.
          </p>
          <p className="muted small">
            Running an agent from the Marketplace pays from this wallet with your sign-in, no API key. The cap bounds everything those runs spend; revoking stops them at
            once, on every relayer, until you allow them again. Your API keys are not affected.
          </p>
          <form className="row" onSubmit={submit} aria-label="Set the web-run cap">
            <label>
              Cap, USDC
              <input
                required
                inputMode="decimal"
                pattern="[0-9]+(\.[0-9]{1,6})?"
                value={cap}
                onChange={(e) => setCap(e.target.value)}
                placeholder={`now ${trimUsdc(webRuns.value.spending_cap_usdc)}`}
              />
            </label>
            <button type="submit" disabled={busy}>
              Set the cap
            </button>
            {webRuns.value.enabled ? (
              <button type="button" className="danger" disabled={busy} onClick={() => void change(() => ({ enabled: false }))}>
                Revoke web runs
              </button>
            ) : (
              <button type="button" disabled={busy} onClick={() => void change(() => ({ enabled: true }))}>
                Allow web runs again
              </button>
            )}
          </form>
        </>
      )}
      {error !== null && <ErrorNotice error={error} />}
    </section>
  );
}
