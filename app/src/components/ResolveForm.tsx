import { formatUsdc, parseUsdc } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { openChain } from "../data/chain.js";
import { resolveDispute, type Resolution } from "../data/disputes.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { Usdc } from "./Usdc.js";

/**
 * The arbiter's ruling on the dispute of leaf `leafIndex` of `agent`'s receipt log (the settlement
 * of `executionId`): upheld with a slash in USDC, or rejected; resolve_dispute signed by the wallet.
 */
export function ResolveForm({ executionId, agent, leafIndex, onResolved }: { executionId: string; agent: string; leafIndex: bigint; onResolved(): void }) {
  const { wallet, config, network } = useApp();
  const [verdict, setVerdict] = useState<"uphold" | "reject">("uphold");
  const [slash, setSlash] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<Resolution | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    let slashUsdc = 0n;
    if (verdict === "uphold") {
      try {
        slashUsdc = parseUsdc(slash.trim());
      } catch {
        setProblem("Give the slash in USDC, e.g. 2.5 (up to 6 decimals).");
        return;
      }
      if (slashUsdc <= 0n) {
        setProblem("To uphold, slash more than 0 USDC.");
        return;
      }
    }
    setProblem(null);
    setBusy(true);
    try {
      const chain = await openChain(config, network);
      setDone(await resolveDispute(chain, wallet, agent, leafIndex, verdict === "uphold", slashUsdc));
      onResolved();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  if (done !== null)
    return (
      <p className="notice notice-ok" role="status" data-testid="resolved">
        {verdict === "uphold" ? (
          <>
            Upheld: <Usdc amount={formatUsdc(done.slashedUsdc)} /> left the agent's collateral, <Usdc amount={formatUsdc(done.payerReceivedUsdc)} /> reached the payer.
          </>
        ) : (
          // A rejection moves no money: saying "0.00 USDC left…" would read as a transfer that happened.
          "Rejected: nothing moved; the agent keeps its collateral and the payer's charge stands."
        )}{" "}
        <ExplorerLink signature={done.signature} />
      </p>
    );
  return (
    <form className="card form" aria-label={`Resolve the dispute on ${executionId}`} onSubmit={(e) => void submit(e)} noValidate>
      <fieldset>
        <legend>Ruling</legend>
        <div className="segmented">
          <label>
            <input type="radio" name={`verdict-${executionId}`} checked={verdict === "uphold"} onChange={() => setVerdict("uphold")} />
            Uphold
          </label>
          <label>
            <input type="radio" name={`verdict-${executionId}`} checked={verdict === "reject"} onChange={() => setVerdict("reject")} />
            Reject
          </label>
        </div>
      </fieldset>
      {verdict === "uphold" && (
        <label>
          Slash, USDC
          <input inputMode="decimal" value={slash} onChange={(e) => setSlash(e.target.value)} aria-invalid={problem !== null} />
        </label>
      )}
      <p className="muted small">
        {verdict === "uphold"
          ? "Moves up to this much of the agent's collateral to the payer (all of it if the collateral holds less)."
          : "Moves nothing; the dispute closes and the payer's rent comes back."}
      </p>
      {problem !== null && (
        <p className="bad" role="alert">
          {problem}
        </p>
      )}
      <div className="row">
        <button type="submit" className={verdict === "uphold" ? "primary" : "danger"} disabled={busy}>
          {busy ? "Waiting for the wallet…" : verdict === "uphold" ? "Sign: uphold and slash" : "Sign: reject"}
        </button>
      </div>
      {error !== null && <ErrorNotice error={error} />}
    </form>
  );
}
