import { AgentMarketError } from "@agent-market/client";

import { Check } from "./Check.js";
import { probeAdvice, type ProbeTarget } from "./probe-advice.js";

/** Where the pre-registration probe stands for the form's current endpoint, key and schemas. */
export type ProbeOutcome = { state: "running" } | { state: "passed"; latency_ms: number } | { state: "failed"; error: unknown };

// The relayer's listing codes split between the two steps: the first two mean the service was
// never reached, the others that it answered but not as the interface requires.
const REACHABILITY_CODES = new Set(["endpoint_not_allowed", "endpoint_unreachable"]);

/** The step a failed probe belongs to, or null when the failure is not the service's (session, input). */
export function failedStep(error: unknown): "reachability" | "conformance" | null {
  if (!(error instanceof AgentMarketError)) return null;
  if (REACHABILITY_CODES.has(error.code)) return "reachability";
  return error.code.startsWith("probe_") ? "conformance" : null;
}

function Advice({ error, target }: { error: unknown; target: ProbeTarget }) {
  const e = error as AgentMarketError;
  const advice = probeAdvice(e, target);
  return (
    <span className="small probe-advice" data-testid="probe-advice">
      : <span data-testid="probe-answered">{advice.answered}</span> <strong>What to change:</strong>{" "}
      <span data-testid="probe-change">{advice.change}</span> <code>{e.code}</code>
    </span>
  );
}

/** The endpoint and interface steps of the listing, run before register_agent locks any collateral. */
export function ConformanceSteps({ outcome, target }: { outcome: ProbeOutcome | null; target: ProbeTarget }) {
  const failed = outcome?.state === "failed" ? failedStep(outcome.error) : null;
  const running = outcome?.state === "running";
  return (
    <>
      <Check ok={outcome?.state === "passed" || failed === "conformance" ? true : failed === "reachability" ? false : null} testId="step-reachable">
        Endpoint publicly reachable{running && " (checking…)"}
        {failed === "reachability" && outcome?.state === "failed" && <Advice error={outcome.error} target={target} />}
      </Check>
      <Check ok={outcome?.state === "passed" ? true : failed === "conformance" ? false : null} testId="step-conformance">
        Interface conformance: the marketplace sends your service one signed test request{running && " (checking…)"}
        {outcome?.state === "passed" && `: answered in ${outcome.latency_ms} ms`}
        {failed === "conformance" && outcome?.state === "failed" && <Advice error={outcome.error} target={target} />}
      </Check>
    </>
  );
}
