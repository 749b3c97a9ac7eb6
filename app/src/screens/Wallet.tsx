import { formatUsdc, parseUsdc } from "@agent-market/client";
import { useRef, useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { AllowanceHint } from "../components/AllowanceHint.js";
import { ConfirmAction } from "../components/ConfirmAction.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { ExplorerLink } from "../components/ExplorerLink.js";
import { FundWallet } from "../components/FundWallet.js";
import { usdcText } from "../components/money.js";
import { Loading } from "../components/Status.js";
import { WebRunsPanel } from "../components/WebRunsPanel.js";
import { formatSol } from "../data/chain-errors.js";
import { allowanceAmount, allowanceProblem, emptyAllowance, emptyAllowanceRefusal } from "../data/allowance-field.js";
import { chainRpcUrl } from "../data/config.js";
import { MIN_FEE_LAMPORTS, requireFeeSol, solBalance } from "../data/fees.js";
import { allKeys } from "../data/keys.js";
import { paidBy, useLive } from "../data/live.js";
import { useLoad } from "../data/use-load.js";
import { base64Decode } from "../wallet/base58.js";

/** Below this, a warning: a few calls of a typical agent. */
const LOW_BALANCE_USDC = 1_000_000n;

export function WalletScreen() {
  const { session, wallet, network, config } = useApp();
  const rpcUrl = chainRpcUrl(config, network);
  const [funding, reloadFunding] = useLoad(() => session.wallet.funding(network), [session, network]);
  const [sol, reloadSol] = useLoad(async () => (rpcUrl === null ? null : solBalance(rpcUrl, wallet.address)), [rpcUrl, wallet.address]);
  // An empty allowance field is the sum of the keys' caps: its hint depends on them.
  const [keys] = useLoad(() => allKeys(session), [session]);
  const reload = () => (reloadFunding(), reloadSol());
  // A paid execution moves the balance and the allowance.
  useLive(config.indexer_graphql_url, [paidBy(wallet.address)], reload);
  const [confirmRevoke, setConfirmRevoke] = useState(false);
  const revokeButton = useRef<HTMLButtonElement>(null);
  const [amount, setAmount] = useState("");
  const [amountProblem, setAmountProblem] = useState<string | null>(null);
  const amountInput = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<string | null>(null);

  async function sign(build: () => Promise<{ transaction: string }>) {
    setBusy(true);
    setError(null);
    setAmountProblem(null);
    setSent(null);
    try {
      await requireFeeSol(rpcUrl, wallet.address, config.localnet);
      const unsigned = await build();
      const signature = await wallet.signAndSend(base64Decode(unsigned.transaction), network, chainRpcUrl(config, network));
      setSent(signature);
      reload();
    } catch (e) {
      const refusal = emptyAllowanceRefusal(e);
      if (refusal === null) return setError(e);
      setAmountProblem(refusal);
      amountInput.current?.focus();
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const problem = allowanceProblem(amount, keys.state === "ready" ? emptyAllowance(keys.value, network) : null);
    if (problem !== null) {
      setAmountProblem(problem);
      amountInput.current?.focus();
      return;
    }
    void sign(() => session.wallet.allowanceTransaction({ network, ...(amount.trim() === "" ? {} : { amount_usdc: formatUsdc(parseUsdc(amount.trim())) }) }));
  }

  // More than the wallet holds is allowed (the allowance may be set ahead of funding), but a call
  // is still refused once it costs more than the balance: said beside the field, not blocked.
  const typed = allowanceAmount(amount);
  const held = funding.state === "ready" ? funding.value.balance_usdc : null;
  const aboveBalance = typed !== null && held !== null && typed > parseUsdc(held);

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
              <dd data-testid="balance" title={`${funding.value.balance_usdc} USDC`}>
                {usdcText(funding.value.balance_usdc)}
              </dd>
            </div>
            <div>
              <dt>Allowance</dt>
              <dd data-testid="allowance" title={`${funding.value.allowance_usdc} USDC`}>
                {usdcText(funding.value.allowance_usdc)}
              </dd>
            </div>
            {sol.state === "ready" && sol.value !== null && (
              <div>
                <dt>SOL for fees</dt>
                <dd data-testid="sol-balance">{formatSol(sol.value)} SOL</dd>
              </div>
            )}
          </dl>
          {sol.state === "ready" && sol.value !== null && sol.value < MIN_FEE_LAMPORTS && (
            <div className="notice notice-warn" role="status" data-testid="no-sol">
              <strong>No SOL for fees.</strong> Setting the allowance and every other transaction your wallet signs pays a small network fee in SOL: fund the wallet below first.
            </div>
          )}
          {parseUsdc(funding.value.balance_usdc) < LOW_BALANCE_USDC && (
            <div className="notice notice-warn" role="status">
              <strong>Low balance.</strong> Runs and API calls are refused once a call costs more than the wallet holds: fund it below, or send USDC to{" "}
              <span className="mono break">{funding.value.wallet}</span> ({funding.value.token_account_exists ? "its USDC account exists" : "its USDC account is created by the first transfer"}).
            </div>
          )}
          <p className="muted small">
            The allowance is what the marketplace's delegate ({funding.value.delegate.slice(0, 8)}…) may move from your USDC account, call by call, into escrow. It never moves
            more; you can lower or revoke it at any time. Calls with your API keys and runs from the Marketplace both draw on it.
          </p>
        </>
      )}
      <FundWallet onFunded={reload} />
      <form className="card form" onSubmit={submit} aria-label="Set the allowance">
        <h2>Set or raise the allowance</h2>
        <label>
          Allowance, USDC
          <input
            ref={amountInput}
            inputMode="decimal"
            value={amount}
            onChange={(e) => (setAmount(e.target.value), setAmountProblem(null))}
            placeholder="for example 5"
            aria-invalid={amountProblem !== null}
            aria-describedby={["allowance-hint", amountProblem !== null && "allowance-problem", aboveBalance && "allowance-above"].filter(Boolean).join(" ")}
          />
        </label>
        {amountProblem !== null && (
          <p id="allowance-problem" className="bad small" data-testid="allowance-problem">
            {amountProblem}
          </p>
        )}
        {aboveBalance && held !== null && (
          <p id="allowance-above" className="small notice notice-warn" data-testid="allowance-above-balance">
            More than the {usdcText(held)} the wallet holds: the allowance is set all the same, but a call is refused once it costs more than the balance.
          </p>
        )}
        <AllowanceHint keys={keys} network={network} />
        <p className="muted small">Your wallet signs an SPL Token approve prepared by the relayer; it replaces the current allowance.</p>
        <div className="row">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Waiting for the wallet…" : "Sign and set the allowance"}
          </button>
          <button ref={revokeButton} type="button" className="danger" disabled={busy || confirmRevoke} aria-expanded={confirmRevoke} onClick={() => setConfirmRevoke(true)}>
            Revoke the allowance
          </button>
        </div>
        {confirmRevoke && (
          // Revoking stops every key and web run from paying.
          <ConfirmAction
            label="Confirm revoking the allowance"
            question="Revoke the allowance? Every API key and web run of this wallet is refused until you set one again."
            confirm="Yes, revoke it"
            onCancel={() => {
              setConfirmRevoke(false);
              requestAnimationFrame(() => revokeButton.current?.focus());
            }}
            onConfirm={() => {
              setConfirmRevoke(false);
              void sign(() => session.wallet.revokeTransaction({ network }));
            }}
          />
        )}
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
