// A failed endpoint check in words: for each of the relayer's codes (and, for an error status, the
// service's own code), what the service answered and what to change.
import { strict as assert } from "node:assert";

import { AgentMarketError } from "@agent-market/client";

import { probeAdvice } from "../src/components/probe-advice.js";

const target = { endpoint: "https://agent.example/v1/", agent: "Agent1111111111111111111111111111111111111" };
const refusal = (code: string, message: string, details: Record<string, unknown> = {}) =>
  new AgentMarketError({ status: 422, code, type: "listing_error", message, details });

describe("a failed endpoint check's advice", () => {
  it("says a service answering for other agents what it answered, and the address to serve", () => {
    const advice = probeAdvice(
      refusal("probe_http_error", "Conformance probe: the endpoint answered 403 agent_not_served.", {
        status: 403,
        service_code: "agent_not_served",
        service_message: "this service does not answer for agent X",
      }),
      target,
    );
    assert.equal(advice.answered, "Your service answered 403 agent_not_served: “this service does not answer for agent X”.");
    assert.ok(advice.change.includes(`answers only for the agent addresses it was started with, and this agent will be ${target.agent}. Start your service with that address`), advice.change);
  });

  it("points each failure to its own fix", () => {
    const http = (status: number, service_code?: string) =>
      probeAdvice(refusal("probe_http_error", `Conformance probe: the endpoint answered ${status}.`, { status, ...(service_code ? { service_code } : {}) }), target).change;
    assert.match(http(401, "unexpected_key"), /request signing key/);
    assert.match(http(400, "invalid_parameters"), /Make the input schema describe what your service accepts/);
    assert.equal(http(404), "Nothing answers POST https://agent.example/v1/execute. The endpoint is your service's base URL, without /execute.");
    assert.match(http(500, "handler_error"), /its own logs/);
    assert.equal(probeAdvice(refusal("probe_http_error", "x", { status: 302 }), target).answered, "Your service answered 302, a redirect, which is not followed.");
    const by = (code: string, message = "Conformance probe: something.") => probeAdvice(refusal(code, message), target);
    assert.equal(by("endpoint_unreachable", "Conformance probe: connection refused.").answered, "Nothing answered at https://agent.example/v1/ (connection refused).");
    assert.match(by("probe_bad_signature").change, /its GET \/health names it/);
    assert.match(by("probe_output_invalid", "Conformance probe: output must have required property 'reply'.").answered, /does not match your output schema: output must have required property 'reply'\.$/);
    assert.match(by("probe_invalid_response").change, /execution id, the output and its signature/);
    assert.match(by("probe_parameters_unavailable").change, /input schema/);
    assert.match(by("endpoint_not_allowed").change, /public https address/);
  });
});
