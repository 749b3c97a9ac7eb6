import { parseUsdc } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { ExplorerLink } from "../components/ExplorerLink.js";
import { Loading } from "../components/Status.js";
import { WebRunsPanel } from "../components/WebRunsPanel.js";
import { chainRpcUrl } from "../data/config.js";
import { useLoad } from "../data/use-load.js";
import { base64Decode } from "../wallet/base58.js";

/** Below this, a warning: a few calls of a typical agent. */
const LOW_BALANCE_USDC = 1_000_000n;

export function WalletScreen() {
  const { session, wallet, network, config } = useApp();
  const [funding, reload] = useLoad(() => session.wallet.funding(network), [session, network]);
  const [amount, setAmount] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<string | null>(null);

  async function sign(build: () => Promise<{ transaction: string }>) {
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      const unsigned = await build();
      const signature = await wallet.signAndSend(base64Decode(unsigned.transaction), network, chainRpcUrl(config, network));
      setSent(signature);
      reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void sign(() => session.wallet.allowanceTransaction({ network, ...(amount.trim() === "" ? {} : { amount_usdc: Number(amount).toFixed(6) }) }));
  }

  return (
    <>
      <h1>Wallet</h1>
      <p className="muted mono small">
        {wallet.address} on {network}
      </p>
      {funding.state === "loading" && <Loading what="your balance" />}
      {funding.state === "error" && <ErrorNotice error={funding.error} onRetry={reload} />}
      {funding.state === "ready" && (
        <>
          <dl className="totals">
            <div>
              <dt>USDC balance</dt>
              <dd data-testid="balance">{funding.value.balance_usdc}</dd>
            </div>
            <div>
              <dt>Allowance</dt>
              <dd data-testid="allowance">{funding.value.allowance_usdc}</dd>
            </div>
          </dl>
          {parseUsdc(funding.value.balance_usdc) < LOW_BALANCE_USDC && (
            <div className="notice notice-warn" role="status">
              <strong>Low balance.</strong> Executions are refused (402 insufficient_balance) once a call costs more than the wallet holds: send USDC to{" "}
              <span className="mono">{funding.value.wallet}</span> ({funding.value.token_account_exists ? "its USDC account exists" : "its USDC account is created by the first transfer"}).
            </div>
          )}
          <p className="muted small">
            The allowance is what the marketplace's delegate ({funding.value.delegate.slice(0, 8)}…) may move from your USDC account, call by call, into escrow. It never moves
            more; you can lower or revoke it at any time. Calls with your API keys and runs from the Marketplace both draw on it.
          </p>
        </>
      )}
      <form className="card form" onSubmit={submit} aria-label="Set the allowance">
        <h2>Set or raise the allowance</h2>
        <label>
          Allowance, USDC
          <input inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,6})?" value={amount} onChange={(e) => setAmount(e.target.value)} placeholder="the sum of your keys' caps" />
        </label>
        <p className="muted small">Your wallet signs an SPL Token approve prepared by the relayer; it replaces the current allowance.</p>
        <div className="row">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Waiting for the wallet…" : "Sign and set the allowance"}
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => void sign(() => session.wallet.revokeTransaction({ network }))}>
            Revoke the allowance
          </button>
        </div>
      </form>
      {sent !== null && (
        <p className="notice notice-ok" role="status" data-testid="allowance-sent">
          Done: <ExplorerLink signature={sent} />
        </p>
      )}
      {error !== null && <ErrorNotice error={error} />}
      <WebRunsPanel />
    </>
  );
}
