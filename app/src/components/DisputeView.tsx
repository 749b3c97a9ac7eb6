import type { Dispute } from "@agent-market/client";

import { attachmentUrl } from "../data/disputes.js";
import { AgentName } from "./AgentName.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { timeText } from "./time.js";
import { Usdc } from "./Usdc.js";
import { shortId } from "./short-id.js";

const OUTCOME: Record<Dispute["state"], string> = {
  none: "no dispute opened",
  open: "open: waiting for the arbiter",
  upheld: "upheld",
  rejected: "rejected",
};


/** A dispute as both sides and the arbiter see it: its state, outcome and every piece of evidence. */
export function DisputeView({ dispute }: { dispute: Dispute }) {
  return (
    <div className="details" data-testid="dispute">
      <dl className="pairs">
        <dt>Dispute</dt>
        <dd>
          <span className={`badge badge-dispute-${dispute.state}`} data-testid="dispute-state">
            {OUTCOME[dispute.state]}
          </span>
        </dd>
        <dt>Execution</dt>
        <dd className="mono">{dispute.execution_id}</dd>
        <dt>Paid</dt>
        <dd>
          <Usdc amount={dispute.amount_usdc} testId="dispute-paid" />
        </dd>
        <dt>Agent</dt>
        <dd>
          <AgentName address={dispute.agent} />
        </dd>
        <dt>Payer</dt>
        <dd className="mono" title={dispute.payer}>
          {shortId(dispute.payer)}
        </dd>
        {dispute.slashed_usdc !== null && (
          <>
            <dt>Slashed to the payer</dt>
            <dd>
              <Usdc amount={dispute.slashed_usdc} testId="dispute-slashed" />
            </dd>
          </>
        )}
        {dispute.opened_at !== null && (
          <>
            <dt>Opened</dt>
            <dd>{timeText(dispute.opened_at)}</dd>
          </>
        )}
        {dispute.resolved_at !== null && (
          <>
            <dt>Resolved</dt>
            <dd>
              {timeText(dispute.resolved_at)} {dispute.resolve_transaction !== null && <ExplorerLink signature={dispute.resolve_transaction} />}
            </dd>
          </>
        )}
      </dl>
      {dispute.evidence.length > 0 && (
        <ol className="plain evidence">
          {dispute.evidence.map((e) => (
            <li key={e.evidence_id} className="card" data-testid={`evidence-${e.role}`}>
              <p className="small muted">
                <strong>{e.role === "payer" ? "Payer" : "Creator"}</strong>, {timeText(e.created_at)}
                {e.bound_on_chain ? ", bound on chain" : ""} · hash <span className="mono">{e.evidence_hash.slice(0, 16)}…</span>
              </p>
              <blockquote className="statement">{e.statement}</blockquote>
              {e.attachments.length > 0 && (
                <ul className="plain small">
                  {e.attachments.map((a) => (
                    <li key={a.index}>
                      <a href={attachmentUrl(dispute.execution_id, e.evidence_id, a.index)} download={a.name}>
                        {a.name}
                      </a>{" "}
                      <span className="muted">
                        ({a.content_type}, {a.size_bytes.toLocaleString("en")} bytes)
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
