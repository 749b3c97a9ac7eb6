import { formatUsdc, parseUsdc } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { openChain } from "../data/chain.js";
import { collateralOf, retireAgent, topUpCollateral, withdrawCollateral, type Collateral } from "../data/my-agents.js";
import { useLoad } from "../data/use-load.js";
import { Countdown } from "./Countdown.js";
import { durationWords } from "./duration.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { Loading } from "./Status.js";
import { timeText } from "./time.js";
import { TopUpToMinimum } from "./TopUpToMinimum.js";
import { usdcText } from "./money.js";
import { Usdc } from "./Usdc.js";

function lockedText(collateral: Collateral): string | null {
  const locked = collateral.locked;
  if (locked === null) return null;
  switch (locked.reason) {
    case "active":
      return `Locked while the agent is active: retire it first, then wait ${durationWords(collateral.cooldownSecs)}.`;
    case "disputes":
      return `Locked: ${locked.open} open dispute${locked.open === 1 ? "" : "s"} on this agent. The collateral stays until the arbiter resolves ${locked.open === 1 ? "it" : "them"}.`;
    case "cooldown":
      return "Cooling down after retirement:";
  }
}

/** The agent's collateral on chain: top up, retire, and withdraw once retired and cooled down. */
export function CollateralPanel({
  address,
  name,
  onRetired,
  onChanged,
}: {
  address: string;
  name: string;
  onRetired(): void;
  /** A top-up, retirement or withdrawal landed: figures read elsewhere are out of date. */
  onChanged(): void;
}) {
  const { wallet, session, config, network } = useApp();
  const [loaded, reload] = useLoad(async () => collateralOf(await openChain(config, network), address), [address]);
  const [amount, setAmount] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [confirmRetire, setConfirmRetire] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<{ what: string; signature: string } | null>(null);

  async function run(what: string, action: () => Promise<{ signature: string; text?: string }>) {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const { signature, text } = await action();
      setDone({ what: text ?? what, signature });
      reload();
      onChanged();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  function topUp(event: FormEvent) {
    event.preventDefault();
    let amountUsdc: bigint;
    try {
      amountUsdc = parseUsdc(amount.trim());
    } catch {
      setProblem("Give an amount in USDC, e.g. 10 (up to 6 decimals).");
      return;
    }
    if (amountUsdc <= 0n) {
      setProblem("Top up more than 0 USDC.");
      return;
    }
    setProblem(null);
    void run(`Added ${usdcText(formatUsdc(amountUsdc))} of collateral`, async () => ({
      signature: await topUpCollateral(await openChain(config, network), wallet, address, amountUsdc),
    }));
  }

  if (loaded.state === "loading") return <Loading what="the collateral" />;
  if (loaded.state === "error") return <ErrorNotice error={loaded.error} onRetry={reload} />;
  const collateral = loaded.value;
  const { account, locked } = collateral;
  const retired = account.status === "Retired";
  return (
    <section className="details" aria-label={`Collateral of ${name}`} data-testid="collateral">
      <dl className="pairs">
        <dt>Collateral</dt>
        <dd>
          <Usdc amount={formatUsdc(account.collateralUsdc)} testId="collateral-usdc" />
        </dd>
        <dt>On chain</dt>
        <dd>{retired ? `retired ${timeText(Number(account.retiredAt) * 1000)}` : "active"}</dd>
        <dt>Open disputes</dt>
        <dd data-testid="open-disputes">
          {account.openDisputes} {account.openDisputes > 0 && <a href="#/disputes">see them</a>}
        </dd>
      </dl>
      {!retired && (
        <TopUpToMinimum
          address={address}
          name={name}
          collateralUsdc={account.collateralUsdc}
          minimumUsdc={collateral.minimumUsdc}
          after={() => {
            reload();
            onChanged();
          }}
        />
      )}
      {!retired && (
        <form className="form" aria-label={`Top up the collateral of ${name}`} onSubmit={topUp} noValidate>
          <label>
            Top up, USDC
            <input inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} aria-invalid={problem !== null} />
          </label>
          <div className="row">
            <button type="submit" disabled={busy}>
              Sign and top up
            </button>
          </div>
          {problem !== null && (
            <p className="bad" role="alert">
              {problem}
            </p>
          )}
        </form>
      )}
      {!retired &&
        (confirmRetire ? (
          <div
            className="notice notice-warn"
            role="group"
            aria-label="Confirm retirement"
            onKeyDown={(e) => {
              if (e.key === "Escape") setConfirmRetire(false);
            }}
          >
            <p>
              Retiring stops new escrows for good (executions already open can still settle or be refunded) and starts a cooldown of {durationWords(collateral.cooldownSecs)}{" "}
              before the collateral can be withdrawn.
            </p>
            <div className="row">
              <button
                type="button"
                className="danger"
                disabled={busy}
                onClick={() => {
                  setConfirmRetire(false);
                  void run("Retired", async () => {
                    const signature = await retireAgent(await openChain(config, network), wallet, session, address);
                    onRetired();
                    return { signature };
                  });
                }}
              >
                Sign: retire “{name}” for good
              </button>
              <button type="button" autoFocus onClick={() => setConfirmRetire(false)}>
                Keep it
              </button>
            </div>
          </div>
        ) : (
          <button type="button" className="danger" disabled={busy} onClick={() => setConfirmRetire(true)}>
            Retire {name}
          </button>
        ))}
      {retired && (
        <div className="row">
          <p className="small" data-testid="withdraw-lock">
            {locked === null ? "Unlocked: the collateral can be withdrawn." : lockedText(collateral)}{" "}
            {locked?.reason === "cooldown" && <Countdown endsAtSecs={locked.unlocksAtSecs} chainNowSecs={collateral.nowSecs} over="over: refresh to withdraw" />}
          </p>
          <button
            type="button"
            className="primary"
            disabled={busy || locked !== null || account.collateralUsdc === 0n}
            onClick={() =>
              void run("Withdrew", async () => {
                const { signature, withdrawnUsdc } = await withdrawCollateral(await openChain(config, network), wallet, address);
                return { signature, text: `Withdrew ${usdcText(formatUsdc(withdrawnUsdc))} of collateral` };
              })
            }
          >
            Sign and withdraw
          </button>
          <button type="button" onClick={reload} disabled={busy}>
            Refresh
          </button>
        </div>
      )}
      {busy && (
        <p className="muted" role="status">
          Waiting for the wallet…
        </p>
      )}
      {done !== null && (
        <p className="notice notice-ok" role="status" data-testid="collateral-done">
          {done.what}: <ExplorerLink signature={done.signature} />
        </p>
      )}
      {error !== null && <ErrorNotice error={error} />}
    </section>
  );
}
