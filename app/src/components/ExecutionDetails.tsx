import type { Agent, Execution } from "@agent-market/client";
import { lazy, Suspense, useState } from "react";

import { useApp } from "../app-context.js";
import type { ChainExecution } from "../data/executions.js";
import { webRunClient } from "../data/web-runs.js";
import { ChargeSummary } from "./ChargeSummary.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { ReceiptCheck } from "./ReceiptCheck.js";
import { Loading } from "./Status.js";

// Opening a dispute signs a program transaction: that code loads with a settled execution's details.
const DisputePanel = lazy(() => import("./DisputePanel.js").then((m) => ({ default: m.DisputePanel })));

const REFUND_REASONS: Record<string, string> = {
  TIMEOUT: "the creator did not answer in time",
  CREATOR_ERROR: "the creator's service failed",
  INVALID_SIGNATURE: "the result's signature was not the agent's",
  OUTPUT_INVALID: "the output did not match the agent's schema",
  RELAYER_ERROR: "the relayer could not finish it (not the creator's fault)",
};

const DISPUTE_STATES: Record<NonNullable<ChainExecution["dispute"]>["state"], string> = {
  OPEN: "open",
  UPHELD: "upheld",
  REJECTED: "rejected",
};

/** A metered listing's unit name, which the execution does not carry; null if none or not known. */
function unitOf(listing: Agent | null): string | null {
  return listing?.pricing.model === "metered" ? listing.pricing.unit : null;
}

/**
 * One on-chain execution: amount and split, refund reason, transactions, finality, receipt; with
 * the receipt, the relayer's charge (a metered call's units, what it held and what was returned).
 */
export function ExecutionDetails({ execution }: { execution: ChainExecution }) {
  const { session, network } = useApp();
  const [relayed, setRelayed] = useState<{ execution: Execution; unit: string | null } | null>(null);
  const [error, setError] = useState<unknown>(null);

  function fetchReceipt() {
    setError(null);
    const client = webRunClient(session, network);
    // The unit's name only words the units: the charge shows without it if the listing is gone.
    const listing = client.agents.get(execution.agent, { network }).catch(() => null);
    Promise.all([client.executions.get(execution.id), listing]).then(([found, agent]) => setRelayed({ execution: found, unit: unitOf(agent) }), setError);
  }

  return (
    <div className="details" data-testid="execution-details">
      <dl className="pairs">
        <dt>Held in escrow</dt>
        <dd>{execution.amount.usdc} USDC</dd>
        <dt>Split</dt>
        <dd>
          {execution.creatorShare.usdc} to the creator, {execution.fee.usdc} marketplace fee
        </dd>
        {execution.refundReason !== null && (
          <>
            <dt>Refunded because</dt>
            <dd>{REFUND_REASONS[execution.refundReason] ?? execution.refundReason}</dd>
          </>
        )}
        {/* The settlement's finality and the dispute's are two facts: a dispute opened later does
            not make a finalized settlement unfinalized again. */}
        <dt>{execution.closeTransaction === null ? "Escrow" : execution.state === "SETTLED" ? "Settlement" : "Refund"}</dt>
        <dd data-testid="execution-finality">{execution.transactionFinalized ? "finalized" : "confirmed (not yet finalized)"}</dd>
        {execution.dispute !== null && (
          <>
            <dt>Dispute</dt>
            <dd data-testid="execution-dispute">
              {DISPUTE_STATES[execution.dispute.state]}, {execution.commitment === "FINALIZED" ? "finalized" : "confirmed (not yet finalized)"}
            </dd>
          </>
        )}
        {execution.openTransaction && (
          <>
            <dt>Escrow opened</dt>
            <dd>
              <ExplorerLink signature={execution.openTransaction.signature} /> slot {execution.openTransaction.slot}
            </dd>
          </>
        )}
        {execution.closeTransaction && (
          <>
            <dt>{execution.state === "SETTLED" ? "Settled" : "Closed"}</dt>
            <dd>
              <ExplorerLink signature={execution.closeTransaction.signature} /> slot {execution.closeTransaction.slot}
            </dd>
          </>
        )}
      </dl>
      {execution.state === "SETTLED" &&
        (relayed === null ? (
          <button type="button" onClick={fetchReceipt}>
            Fetch and verify the receipt
          </button>
        ) : (
          <>
            <p>
              <ChargeSummary charge={relayed.execution.charge} unit={relayed.unit} />
            </p>
            <ReceiptCheck execution={relayed.execution} auto />
          </>
        ))}
      {error !== null && <ErrorNotice error={error} />}
      {execution.state === "SETTLED" && (
        <Suspense fallback={<Loading what="the dispute form" />}>
          <DisputePanel executionId={execution.id} />
        </Suspense>
      )}
    </div>
  );
}
