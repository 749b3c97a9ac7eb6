// A failed endpoint check in plain words: what the creator's service answered the marketplace's
// test request, and what to change. The relayer's codes (and, for an error status, the service's
// own code and words, which the creator kit sends) pick the advice.
import type { AgentMarketError } from "@agent-market/client";

export interface ProbeAdvice {
  answered: string;
  change: string;
}

/** Where the check was sent, to name it in the advice. */
export interface ProbeTarget {
  endpoint: string;
  agent: string;
}

const SIGNATURE_CODES = new Set(["missing_signature", "malformed_signature", "unexpected_key", "bad_signature", "stale_timestamp", "replayed_request"]);

function withoutPrefix(message: string): string {
  return message.replace(/^Conformance probe: /, "").replace(/\.$/, "");
}

function httpAdvice(error: AgentMarketError, target: ProbeTarget): ProbeAdvice {
  const status = Number(error.details.status);
  const code = typeof error.details.service_code === "string" ? error.details.service_code : null;
  const words = typeof error.details.service_message === "string" && error.details.service_message !== "" ? `: “${error.details.service_message}”` : "";
  const answered = `Your service answered ${status}${code === null ? "" : ` ${code}`}${words}.`;
  if (code === "agent_not_served") {
    return {
      answered,
      change: `A service answers only for the agent addresses it was started with, and this agent will be ${target.agent}. Start your service with that address, or use the starter service. The example agents of this marketplace answer for their own listings only.`,
    };
  }
  if (code !== null && SIGNATURE_CODES.has(code)) {
    return {
      answered,
      change: "Your service did not accept the marketplace's signature on the request. Start it with this marketplace's request signing key (request_signing_key in GET /v1/marketplace) and check its clock.",
    };
  }
  if (code === "invalid_parameters") {
    return { answered, change: "The test request's parameters are built from your input schema. Make the input schema describe what your service accepts." };
  }
  if (code === "unsupported_protocol_version") {
    return { answered, change: "Your service speaks another version of the execute protocol: update it to the current creator kit." };
  }
  if (status === 404 || status === 405) {
    return { answered, change: `Nothing answers POST ${target.endpoint.replace(/\/+$/, "")}/execute. The endpoint is your service's base URL, without /execute.` };
  }
  if (status >= 300 && status < 400) {
    return { answered: `Your service answered ${status}, a redirect, which is not followed.`, change: "Give the address the redirect points to as the endpoint." };
  }
  if (status >= 500) return { answered, change: "Your service failed while answering: its own logs say why." };
  return { answered, change: "Answer the marketplace's signed POST /execute with 200 and a signed result, as the creator kit does." };
}

export function probeAdvice(error: AgentMarketError, target: ProbeTarget): ProbeAdvice {
  const said = withoutPrefix(error.message);
  switch (error.code) {
    case "endpoint_not_allowed":
      return {
        answered: `The marketplace may not call this address: ${said}.`,
        change: "Give your service's base URL as the marketplace's policy allows it: a public https address (a local marketplace takes http and this machine's addresses too), without credentials or fragment.",
      };
    case "probe_parameters_unavailable":
      return {
        answered: "The marketplace could not build test parameters from your input schema, so your service was not called.",
        change: "Give the input schema an object whose required properties have a type, a default, an enum or examples to fill them from.",
      };
    case "endpoint_unreachable":
      return {
        answered: `Nothing answered at ${target.endpoint} (${said}).`,
        change: "Check that your service is running and listening at that address, and answers within the maximum execution time.",
      };
    case "probe_http_error":
      return httpAdvice(error, target);
    case "probe_invalid_response":
      return {
        answered: `Your service's answer is not a result the marketplace can use: ${said}.`,
        change: "Answer with the creator kit, or as docs/execute-protocol.md describes: JSON with the execution id, the output and its signature.",
      };
    case "probe_bad_signature":
      return {
        answered: `Your service's result is not signed by the key given here: ${said}.`,
        change: "Give the public key your service signs with (its GET /health names it), or start the service with this key.",
      };
    case "probe_output_invalid":
      return {
        answered: `Your service's output does not match your output schema: ${said}.`,
        change: "Make the output schema describe what your service returns, or change what it returns.",
      };
    default:
      return { answered: `${said}.`, change: "Fix your service, then check again." };
  }
}
