// What a creator's answer means beyond its own execution: which refund each failure is (every one
// of them the creator's doing), and its weight on the agent's circuit breaker
// (listings/circuit-breaker.ts).
import type { RefundReason } from "@agent-market/program";
import { reportBackgroundError } from "@agent-market/service";

import type { CreatorFailure } from "../creator/creator-client.js";
import type { ErrorCode } from "../errors.js";
import type { CircuitBreaker } from "../listings/circuit-breaker.js";
import type { ListingForExecution, ListingService } from "../listings/listing-service.js";
import type { ExecutionRow } from "./execution-row.js";

export const FAILURES: Record<CreatorFailure, { reason: RefundReason; code: ErrorCode }> = {
  timeout: { reason: "Timeout", code: "creator_timeout" },
  unreachable: { reason: "CreatorError", code: "creator_error" },
  endpoint_not_allowed: { reason: "CreatorError", code: "creator_error" },
  http_error: { reason: "CreatorError", code: "creator_error" },
  response_too_large: { reason: "CreatorError", code: "creator_error" },
  invalid_response: { reason: "OutputInvalid", code: "invalid_result" },
  bad_signature: { reason: "InvalidSignature", code: "invalid_result" },
  output_invalid: { reason: "OutputInvalid", code: "invalid_result" },
};

/**
 * Counts a failure against the agent's circuit, or closes the circuit a successful probe was let
 * through; the relayer's cache of the listing is dropped when the circuit changed. A failing
 * write is logged: it must not stand in the way of the payer's refund.
 */
export async function recordVerdict(
  breaker: CircuitBreaker,
  listings: ListingService,
  row: ExecutionRow,
  ok: boolean,
  listing: ListingForExecution,
): Promise<void> {
  try {
    if (ok) {
      // Only a probe's success changes a circuit, and only an agent with one can have a probe.
      if (listing.circuit && (await breaker.succeeded(row.network, row.agent, row.id))) listings.forget(row.network, row.agent);
    } else if (await breaker.creatorFailed(row.network, row.agent, row.id)) {
      listings.forget(row.network, row.agent);
    }
  } catch (error) {
    reportBackgroundError("circuit breaker", error, { execution_id: row.id });
  }
}
