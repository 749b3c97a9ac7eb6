import type { Dispute } from "@agent-market/client";
import { useState } from "react";

import { useApp } from "../app-context.js";
import { DisputeView } from "../components/DisputeView.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { ResolveForm } from "../components/ResolveForm.js";
import { Empty, Loading } from "../components/Status.js";
import { openChain } from "../data/chain.js";
import { arbiterOf } from "../data/disputes.js";
import { useLoad } from "../data/use-load.js";

/** One open dispute; once ruled, read again so the outcome shows as both sides see it. */
function ArbiterItem({ dispute }: { dispute: Dispute }) {
  const { session } = useApp();
  const [shown, setShown] = useState(dispute);
  const [error, setError] = useState<unknown>(null);
  // The form stays once it ruled: it holds what moved on chain.
  const [ruled, setRuled] = useState(false);
  return (
    <li className="card" data-testid="arbiter-dispute">
      <DisputeView dispute={shown} />
      {(shown.state === "open" || ruled) && shown.leaf_index !== null && (
        <ResolveForm
          executionId={shown.execution_id}
          agent={shown.agent}
          leafIndex={BigInt(shown.leaf_index)}
          onResolved={() => {
            setRuled(true);
            void session.disputes.get(shown.execution_id).then(setShown, setError);
          }}
        />
      )}
      {error !== null && <ErrorNotice error={error} />}
    </li>
  );
}

/** The market's arbiter: the open disputes with both sides' evidence, and a ruling on each. */
export function ArbiterScreen() {
  const { session, wallet, config, network } = useApp();
  const [arbiter, reloadArbiter] = useLoad(async () => arbiterOf(await openChain(config, network)), [config, network]);
  const [open, reload] = useLoad(async () => (await session.disputes.list({ role: "arbiter", state: "open", limit: 100 })).data, [session]);
  const isArbiter = arbiter.state === "ready" && arbiter.value === wallet.address;
  return (
    <>
      <h1>Arbiter</h1>
      {arbiter.state === "loading" && <Loading what="the market's arbiter" />}
      {arbiter.state === "error" && <ErrorNotice error={arbiter.error} onRetry={reloadArbiter} />}
      {arbiter.state === "ready" && !isArbiter && (
        <div className="notice notice-warn" role="status" data-testid="not-arbiter">
          <strong>This wallet cannot resolve disputes.</strong>
          <p>
            Only the market's arbiter, <span className="mono wrap">{arbiter.value}</span>, signs resolve_dispute; this wallet is <span className="mono wrap">{wallet.address}</span>.
            Sign in with the arbiter's wallet to rule.
          </p>
        </div>
      )}
      {isArbiter && (
        <>
          <p className="muted">Read both sides, then uphold (slashing the agent's collateral to the payer) or reject (nothing moves). Either way the dispute is resolved; its account stays until the settlement's dispute window has passed, when anyone may close it and return its rent to the payer.</p>
          {open.state === "loading" && <Loading what="open disputes" />}
          {open.state === "error" && <ErrorNotice error={open.error} onRetry={reload} />}
          {open.state === "ready" && open.value.length === 0 && <Empty>No open dispute.</Empty>}
          {open.state === "ready" && open.value.length > 0 && (
            <ul className="plain">
              {open.value.map((d) => (
                <ArbiterItem key={d.execution_id} dispute={d} />
              ))}
            </ul>
          )}
        </>
      )}
    </>
  );
}
