import type { Dispute, DisputeRole } from "@agent-market/client";
import { useState } from "react";

import { useApp } from "../app-context.js";
import { DisputeView } from "../components/DisputeView.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { EvidenceForm } from "../components/EvidenceForm.js";
import { Empty, Loading } from "../components/Status.js";
import { submitEvidence, type EvidenceFile } from "../data/disputes.js";
import { useLoad } from "../data/use-load.js";

/** A creator's answer to a dispute on its agent: kept and hashed by the relayer, signed by nobody. */
function CreatorAnswer({ dispute, onAnswered }: { dispute: Dispute; onAnswered(): void }) {
  const { session } = useApp();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  async function answer(statement: string, files: EvidenceFile[]): Promise<boolean> {
    setError(null);
    setBusy("Keeping the answer…");
    try {
      await submitEvidence(session, dispute.execution_id, statement, files);
      onAnswered();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(null);
    }
  }
  return (
    <>
      <EvidenceForm
        title="Answer as the creator"
        hint="Your side, for the arbiter: what the agent was asked and why its answer stands. It is kept with its own hash; nothing is signed."
        submitLabel="Send the answer"
        side="creator"
        busyLabel={busy}
        onSubmit={answer}
      />
      {error !== null && <ErrorNotice error={error} />}
    </>
  );
}

function DisputeList({ role, title, empty }: { role: DisputeRole; title: string; empty: string }) {
  const { session } = useApp();
  const [list, reload] = useLoad(async () => (await session.disputes.list({ role, limit: 100 })).data, [session, role]);
  return (
    <section aria-labelledby={`disputes-${role}`}>
      <h2 id={`disputes-${role}`}>{title}</h2>
      {list.state === "loading" && <Loading what="disputes" />}
      {list.state === "error" && <ErrorNotice error={list.error} onRetry={reload} />}
      {list.state === "ready" && list.value.length === 0 && <Empty>{empty}</Empty>}
      {list.state === "ready" && list.value.length > 0 && (
        <ul className="plain">
          {list.value.map((d) => (
            <li key={d.execution_id} className="card" data-testid={`dispute-${role}`}>
              <DisputeView dispute={d} />
              {role === "creator" && d.state === "open" && <CreatorAnswer dispute={d} onAnswered={reload} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function DisputesScreen() {
  return (
    <>
      <h1>Disputes</h1>
      <p className="muted">
        A payer disputes a settled execution from its details on the Executions screen, within the market's dispute window. The market's arbiter rules; an upheld
        dispute pays the payer from the agent's collateral.
      </p>
      <DisputeList role="payer" title="Opened by you" empty="You have opened no dispute." />
      <DisputeList role="creator" title="On your agents" empty="No dispute on your agents." />
    </>
  );
}
