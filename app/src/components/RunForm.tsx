// Runs an agent from the web: the same execute route and escrow as an API call, charged to the
// signed-in wallet through its session (no API key), with an Idempotency-Key kept until the answer arrives (a retry after a lost
// answer replays instead of charging twice). The output shows as the creator streams it, then
// the charge and the receipt check once the run is final.
import { callPriceUsdc, ExecutionFailedError, newIdempotencyKey, type Agent, type Execution } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { parameterRefusal, type FieldRefusal } from "../data/parameter-refusal.js";
import { streamedRun } from "../data/streamed-run.js";
import { webRunClient } from "../data/web-runs.js";
import { ChargeSummary } from "./ChargeSummary.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { listingText } from "./listing-status.js";
import { ReceiptCheck } from "./ReceiptCheck.js";
import { parameterInputId, SchemaForm, type FieldProblems } from "./SchemaForm.js";
import { Usdc } from "./Usdc.js";

// Refusals that mean the listing shown is out of date: the page reads it again, so its status and
// price say why instead of the form inviting the same refused call.
const LISTING_CHANGED = new Set(["agent_terms_changed", "agent_unavailable", "endpoint_changed", "price_above_maximum"]);

export function RunForm({ agent, onListingChanged }: { agent: Agent; onListingChanged: () => void }) {
  const { session, network } = useApp();
  const [task, setTask] = useState("");
  const [parameters, setParameters] = useState<Record<string, unknown>>({});
  const [problems, setProblems] = useState<FieldProblems>({});
  const [refused, setRefused] = useState<FieldRefusal | null>(null);
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ execution: Execution; request: { task: string; parameters: Record<string, unknown> } } | null>(null);
  /** The output's text so far while the run streams; after a failure, what had arrived. */
  const [streamed, setStreamed] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function run(event: FormEvent) {
    event.preventDefault();
    // A field's problem is already beside it: the submission only takes the reader there.
    const invalid = Object.keys(problems)[0];
    if (invalid !== undefined) return document.getElementById(parameterInputId(invalid))?.focus();
    setBusy(true);
    setError(null);
    setRefused(null);
    setResult(null);
    setStreamed(null);
    const request = { task, parameters };
    try {
      const client = webRunClient(session, network);
      // The price shown here is the most the call may cost (a metered call's price for its most
      // units, all held in escrow): a price raised on chain since is refused.
      const execution = await streamedRun(client, agent.id, request, { idempotencyKey, maxPriceUsdc: callPriceUsdc(agent.pricing) }, setStreamed);
      setResult({ execution, request });
      setStreamed(null);
      setIdempotencyKey(newIdempotencyKey());
    } catch (e) {
      // The relayer's check of one parameter goes beside its field, as the form's own checks do.
      const refusal = parameterRefusal(e);
      const field = refusal === null ? null : document.getElementById(parameterInputId(refusal.field));
      if (refusal !== null && field !== null) {
        setRefused(refusal);
        field.focus();
      } else setError(e);
      // A refused or refunded call is finished: the next submission is a new call.
      const status = (e as { status?: number }).status;
      if (e instanceof ExecutionFailedError || status === 402 || status === 409 || status === 429 || status === 503) setIdempotencyKey(newIdempotencyKey());
      if (LISTING_CHANGED.has((e as { code?: string }).code ?? "")) onListingChanged();
    } finally {
      setBusy(false);
    }
  }

  // A retired listing never takes a call again: a form to fill in would only mislead.
  if (agent.status === "retired")
    return (
      <section className="card" aria-labelledby="run-title">
        <h2 id="run-title">Run</h2>
        <p data-testid="run-unavailable">This agent is retired: its creator has withdrawn it from the marketplace, and it takes no more calls.</p>
      </section>
    );
  // Why the button is disabled, beside it (a paused listing or an open circuit), rather than a
  // button that silently does nothing.
  const refusal =
    agent.status === "paused"
      ? `Not taking calls: ${listingText(agent)}.`
      : agent.circuit.state === "open"
        ? `Not taking calls: too many failed calls lately; try again after ${new Date(agent.circuit.retry_at!).toLocaleTimeString()}.`
        : null;

  return (
    <section className="card" aria-labelledby="run-title">
      <h2 id="run-title">Run</h2>
      <form className="form" onSubmit={(e) => void run(e)}>
        <label>
          Task
          <textarea required maxLength={20000} rows={3} value={task} onChange={(e) => setTask(e.target.value)} placeholder="What should the agent do?" />
        </label>
        <SchemaForm
          schema={agent.input_schema}
          refused={refused}
          onChange={(next, nextProblems) => {
            setParameters(next);
            setProblems(nextProblems);
            setRefused(null);
          }}
        />
        <p className="muted small" data-testid="run-max-price">
          {agent.pricing.model === "metered" ? (
            <>
              Up to <Usdc amount={callPriceUsdc(agent.pricing)} /> for this call, held from your wallet: it is charged <Usdc amount={agent.pricing.price_per_unit_usdc} /> per{" "}
              {agent.pricing.unit} it used and the rest returned. A higher price is refused, never charged.
            </>
          ) : (
            <>
              At most <Usdc amount={callPriceUsdc(agent.pricing)} /> for this call: a higher price is refused, never charged.
            </>
          )}
        </p>
        <button type="submit" className="primary" disabled={busy || refusal !== null} aria-describedby={refusal === null ? undefined : "run-refusal"}>
          {busy ? "Running…" : "Run and pay from my wallet"}
        </button>
        {refusal !== null && (
          <p id="run-refusal" className="small" data-testid="run-refusal">
            {refusal}
          </p>
        )}
      </form>
      {error !== null && <ErrorNotice error={error} />}
      {streamed !== null && (
        <div className="run-result">
          <h3>{error instanceof ExecutionFailedError ? "Output received before the refund (not charged)" : "Output so far"}</h3>
          <pre data-testid="run-stream" role="log" aria-live="polite">
            {streamed}
          </pre>
        </div>
      )}
      {result !== null && (
        <div className="run-result" data-testid="run-result">
          <h3>Output</h3>
          <pre data-testid="run-output">
            {/* Text as it streamed, not as a quoted JSON string. */}
            {typeof result.execution.output === "string" ? result.execution.output : JSON.stringify(result.execution.output, null, 2)}
          </pre>
          <p>
            <ChargeSummary charge={result.execution.charge} unit={agent.pricing.model === "metered" ? agent.pricing.unit : null} />
            {result.execution.transactions.settlement && (
              <>
                {" "}
                · settlement <ExplorerLink signature={result.execution.transactions.settlement} />
              </>
            )}
          </p>
          <ReceiptCheck execution={result.execution} signingKey={agent.signing_key} request={result.request} auto />
        </div>
      )}
    </section>
  );
}
