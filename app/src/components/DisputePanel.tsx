import { useState } from "react";

import { useApp } from "../app-context.js";
import { openChain } from "../data/chain.js";
import { disputeWindow, openDispute, submitEvidence, type EvidenceFile } from "../data/disputes.js";
import { useLoad } from "../data/use-load.js";
import { Countdown } from "./Countdown.js";
import { DisputeView } from "./DisputeView.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { EvidenceForm } from "./EvidenceForm.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { Loading } from "./Status.js";

/**
 * The payer's side of a settled execution: within the market's dispute window, a statement and
 * files kept by the relayer, their hash checked here, then open_dispute of the settlement's leaf
 * in its agent's receipt log, signed by the wallet.
 * Once opened, the dispute and its outcome.
 */
export function DisputePanel({ executionId }: { executionId: string }) {
  const { session, wallet, config, network } = useApp();
  const [loaded, reload] = useLoad(async () => {
    const dispute = await session.disputes.get(executionId);
    const window = dispute.state === "none" ? await disputeWindow(await openChain(config, network), executionId, dispute.agent) : null;
    return { dispute, window };
  }, [executionId, session]);
  const [step, setStep] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [opened, setOpened] = useState<string | null>(null);

  /** `agent`: the execution's, whose receipt log holds the leaf disputed. */
  async function open(agent: string, statement: string, files: EvidenceFile[]): Promise<boolean> {
    setError(null);
    try {
      setStep("Keeping the evidence…");
      const evidence = await submitEvidence(session, executionId, statement, files);
      setStep("Waiting for the wallet…");
      const chain = await openChain(config, network);
      setOpened(await openDispute(chain, wallet, executionId, agent, evidence.evidence_hash));
      reload();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setStep(null);
    }
  }

  if (loaded.state === "loading") return <Loading what="the dispute" />;
  if (loaded.state === "error") return <ErrorNotice error={loaded.error} onRetry={reload} />;
  const { dispute, window } = loaded.value;
  return (
    <section aria-label="Dispute" className="details">
      {opened !== null && (
        <p className="notice notice-ok" role="status" data-testid="dispute-opened">
          Dispute opened: <ExplorerLink signature={opened} />
        </p>
      )}
      {dispute.state !== "none" && <DisputeView dispute={dispute} />}
      {window !== null && !window.receiptExists && <p className="muted small">The dispute window of this execution has passed.</p>}
      {window !== null && window.receiptExists && window.nowSecs > window.endsAtSecs && <p className="muted small">The dispute window of this execution has closed.</p>}
      {window !== null && window.receiptExists && !window.disputed && window.nowSecs <= window.endsAtSecs && (
        <>
          <p className="small">
            Dispute window: <Countdown endsAtSecs={window.endsAtSecs} chainNowSecs={window.nowSecs} over="closed" />
          </p>
          <EvidenceForm
            title="Dispute this execution"
            hint="Say what went wrong. The relayer keeps your statement and files; your wallet then signs open_dispute with their hash, so neither can change afterwards. The market's arbiter decides, and may pay you from the agent's collateral."
            submitLabel="Sign and open the dispute"
            busyLabel={step}
            onSubmit={(statement, files) => open(dispute.agent, statement, files)}
          />
        </>
      )}
      {error !== null && <ErrorNotice error={error} />}
    </section>
  );
}
