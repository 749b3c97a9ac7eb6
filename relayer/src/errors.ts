// The API's closed set of error codes. Every error answer has the shape
// {"error":{"type","code","message","param"?,"request_id", ...details}}; the code fixes the
// status and the type, so a client can branch on `code` alone. docs/api.md lists them.

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "listing_error"
  | "payment_error"
  | "rate_limit_error"
  | "api_error";

interface ErrorSpec {
  status: number;
  type: ErrorType;
  description: string;
}

export const ERROR_CODES = {
  invalid_json: { status: 400, type: "invalid_request_error", description: "The body is not valid JSON." },
  validation_failed: {
    status: 400,
    type: "invalid_request_error",
    description: "A parameter is missing, of the wrong type or out of range; `param` names its path.",
  },
  body_too_large: { status: 413, type: "invalid_request_error", description: "The body is over the size limit." },
  unsupported_media_type: {
    status: 415,
    type: "invalid_request_error",
    description: "The body is not application/json.",
  },
  invalid_cursor: {
    status: 400,
    type: "invalid_request_error",
    description: "`starting_after` is not an id from this list.",
  },
  network_not_configured: {
    status: 400,
    type: "invalid_request_error",
    description: "This relayer serves no such network (a `svc_live_` key needs mainnet to be configured).",
  },
  credential_in_query: {
    status: 400,
    type: "invalid_request_error",
    description:
      "An API key or session token was sent in the URL, where proxies and logs keep it: send it in the Authorization header, and revoke that key.",
  },
  route_not_found: { status: 404, type: "not_found_error", description: "No such endpoint." },
  resource_not_found: {
    status: 404,
    type: "not_found_error",
    description: "No such object, or it belongs to another wallet.",
  },

  missing_authorization: {
    status: 401,
    type: "authentication_error",
    description: "No Authorization header.",
  },
  malformed_authorization: {
    status: 401,
    type: "authentication_error",
    description: "The Authorization header is not `Bearer <credential>`.",
  },
  malformed_api_key: {
    status: 401,
    type: "authentication_error",
    description: "The API key is not well formed: wrong prefix, length, alphabet or checksum.",
  },
  unknown_api_key: { status: 401, type: "authentication_error", description: "No such API key." },
  revoked_api_key: { status: 401, type: "authentication_error", description: "The API key was revoked." },
  expired_api_key: { status: 401, type: "authentication_error", description: "The API key is past its expiry." },
  session_required: {
    status: 401,
    type: "authentication_error",
    description: "This endpoint needs a wallet session (cookie or `Bearer sess_…`).",
  },
  invalid_session: {
    status: 401,
    type: "authentication_error",
    description: "The session is unknown, expired or signed out.",
  },
  api_key_not_allowed: {
    status: 403,
    type: "permission_error",
    description: "API keys cannot manage keys, listings or wallet settings; sign in with the wallet.",
  },
  cookie_request_not_json: {
    status: 403,
    type: "permission_error",
    description:
      "A request authenticated by the session cookie must send `Content-Type: application/json` (which a cross-site form cannot), or authenticate with `Authorization: Bearer sess_…`.",
  },
  api_key_required: {
    status: 401,
    type: "authentication_error",
    description: "This endpoint needs an API key (`Bearer svc_test_…` or `Bearer svc_live_…`).",
  },

  invalid_sign_in_message: {
    status: 400,
    type: "invalid_request_error",
    description: "The signed message is not the one this server issued for that nonce.",
  },
  sign_in_domain_mismatch: {
    status: 401,
    type: "authentication_error",
    description: "The signed message is bound to another domain.",
  },
  unknown_nonce: { status: 401, type: "authentication_error", description: "The nonce was never issued." },
  nonce_used: { status: 401, type: "authentication_error", description: "The nonce was already used." },
  nonce_expired: { status: 401, type: "authentication_error", description: "The sign-in message has expired." },
  invalid_signature: {
    status: 401,
    type: "authentication_error",
    description: "The signature does not verify against the wallet's key.",
  },

  agent_already_listed: {
    status: 409,
    type: "conflict_error",
    description: "The agent is listed already; update it instead.",
  },
  listing_retired: { status: 409, type: "conflict_error", description: "A retired listing cannot change." },
  endpoint_already_listed: {
    status: 409,
    type: "conflict_error",
    description:
      "Another creator lists an agent at this endpoint (compared by scheme, host, port and path): a service is listed only by the creator who runs it.",
  },
  key_proof_required: {
    status: 403,
    type: "permission_error",
    description:
      "Probing an endpoint for an agent not on chain under this wallet with this key needs `key_proof`: the signing key's signature over the signing-key proof of the agent and this wallet (`agent-market key-proof`).",
  },
  invalid_key_proof: {
    status: 403,
    type: "permission_error",
    description: "`key_proof` is not the signing key's signature over the signing-key proof of this agent and this wallet.",
  },
  agent_not_on_chain: {
    status: 422,
    type: "listing_error",
    description: "No agent account at that address on this network: register it on-chain first.",
  },
  not_agent_creator: {
    status: 403,
    type: "permission_error",
    description: "The on-chain agent belongs to another wallet.",
  },
  agent_retired_on_chain: {
    status: 422,
    type: "listing_error",
    description: "The on-chain agent is retired.",
  },
  signing_key_mismatch: {
    status: 422,
    type: "listing_error",
    description: "The Ed25519 key differs from the one registered on-chain.",
  },
  pricing_mismatch: {
    status: 422,
    type: "listing_error",
    description: "The pricing differs from the one registered on-chain.",
  },
  endpoint_mismatch: {
    status: 422,
    type: "listing_error",
    description: "The endpoint differs from the one registered on-chain.",
  },
  listing_hash_mismatch: {
    status: 422,
    type: "listing_error",
    description: "SHA-256 of the listing document differs from the on-chain listing hash.",
  },
  collateral_below_minimum: {
    status: 422,
    type: "listing_error",
    description: "The agent's locked collateral is below the marketplace minimum.",
  },
  receipt_log_missing: {
    status: 422,
    type: "listing_error",
    description:
      "The agent has no receipt log. Its creator pays it (create_receipt_log, which registration through the SDK, the CLI and the dashboard sends).",
  },
  endpoint_not_allowed: {
    status: 422,
    type: "listing_error",
    description:
      "The endpoint is not a public https URL (private, loopback, link-local and metadata addresses are refused), " +
      "or its host name does not resolve to allowed addresses only (whether it resolved at all is not told).",
  },
  endpoint_unreachable: {
    status: 422,
    type: "listing_error",
    description: "The endpoint did not answer (connection or time limit).",
  },
  probe_parameters_unavailable: {
    status: 422,
    type: "listing_error",
    description: "No probe parameters could be built from the input schema; give `probe.parameters`.",
  },
  probe_http_error: {
    status: 422,
    type: "listing_error",
    description: "The conformance probe got a status other than 200 (redirects are not followed).",
  },
  probe_invalid_response: {
    status: 422,
    type: "listing_error",
    description: "The probe's answer is not a valid execute response (JSON, size, execution id, result hash).",
  },
  probe_bad_signature: {
    status: 422,
    type: "listing_error",
    description: "The probe's result is not signed by the listed Ed25519 key over the result digest.",
  },
  probe_output_invalid: {
    status: 422,
    type: "listing_error",
    description: "The probe's output does not match the output schema.",
  },
  invalid_schema: {
    status: 400,
    type: "invalid_request_error",
    description: "An input or output schema is not a valid JSON Schema 2020-12 document, or too large.",
  },

  invalid_idempotency_key: {
    status: 400,
    type: "invalid_request_error",
    description: "Idempotency-Key must be 1 to 255 visible ASCII characters.",
  },
  agent_unavailable: {
    status: 409,
    type: "conflict_error",
    description:
      "The agent is paused by its creator, retired on-chain, or locks less than the market's minimum collateral (an upheld dispute slashed it); it takes no executions now.",
  },
  idempotency_key_reused: {
    status: 409,
    type: "conflict_error",
    description: "This Idempotency-Key was used with another agent, task or parameters.",
  },
  idempotency_request_in_progress: {
    status: 409,
    type: "conflict_error",
    description: "The first request with this Idempotency-Key is still running; retry after a moment.",
  },
  endpoint_changed: {
    status: 409,
    type: "conflict_error",
    description:
      "The agent's account names an endpoint its listing never probed (changed by update_agent): the call was not sent there and the escrow, if any, was refunded. The listing is paused until its creator lists the new endpoint and resumes it.",
  },
  price_above_maximum: {
    status: 409,
    type: "conflict_error",
    description:
      "The call costs more than the request's `max_price_usdc`; nothing was sent and nothing was charged. `price_usdc` is what it costs now.",
  },
  agent_terms_changed: {
    status: 409,
    type: "conflict_error",
    description:
      "The agent's account holds pricing (or a listing hash) other than its verified listing's, changed by update_agent: nothing was sent and nothing was charged. The listing is paused until its creator lists the new terms (PATCH).",
  },
  agent_circuit_open: {
    status: 503,
    type: "api_error",
    description:
      "The agent's circuit breaker is open: its creator caused too many refunds lately, and it takes no executions until `retry_at` (then one probe call decides); nothing was sent and nothing was charged.",
  },
  key_concurrency_limit: {
    status: 429,
    type: "rate_limit_error",
    description:
      "This key has as many executions in flight as it may (`limit`); nothing was sent and nothing was charged. Retry when one ends.",
  },
  agent_concurrency_limit: {
    status: 429,
    type: "rate_limit_error",
    description:
      "The agent has as many executions in flight as it may take (`limit`); nothing was sent and nothing was charged. Retry when one ends.",
  },
  wallet_signature_required: {
    status: 403,
    type: "permission_error",
    description:
      "Raising the web-run cap or enabling web runs again needs a fresh signature by the wallet (POST /v1/wallet/web-runs/confirmation, signed, sent as `confirmation`): a session alone may only lower the cap or revoke.",
  },
  invalid_confirmation: {
    status: 403,
    type: "permission_error",
    description:
      "The confirmation is not the wallet's signature over a message this server issued it for this very change, unused and unexpired; nothing changed.",
  },
  web_runs_revoked: {
    status: 403,
    type: "permission_error",
    description:
      "The wallet revoked its web runs on this network: sessions cannot run agents until the wallet enables them again (PATCH /v1/wallet/web-runs).",
  },
  subscription_not_offered: {
    status: 409,
    type: "conflict_error",
    description: "The agent is sold pay-per-use; it has no subscription.",
  },
  subscription_not_renewable: {
    status: 409,
    type: "conflict_error",
    description:
      "The wallet's subscription to this agent cannot take another period now: more than a period of it is left, or it was bought under the agent's earlier pricing and still covers calls (it is honoured until it expires); nothing was charged.",
  },
  insufficient_balance: {
    status: 402,
    type: "payment_error",
    description: "The wallet holds less USDC than the call costs; nothing was charged.",
  },
  insufficient_allowance: {
    status: 402,
    type: "payment_error",
    description: "The wallet's allowance to the program's delegate is below the price; raise it with POST /v1/wallet/allowance.",
  },
  subscription_required: {
    status: 402,
    type: "payment_error",
    description: "The agent is sold by subscription and the wallet has no active one; subscribe first.",
  },
  spending_cap_reached: {
    status: 402,
    type: "payment_error",
    description: "This call would take the API key past its spending cap; nothing was charged.",
  },
  creator_error: {
    status: 502,
    type: "api_error",
    description: "The creator's service failed (error status, unreachable, too large); the escrow was refunded.",
  },
  creator_timeout: {
    status: 504,
    type: "api_error",
    description: "The creator's service did not answer within the agent's maximum execution time; the escrow was refunded.",
  },
  invalid_result: {
    status: 502,
    type: "api_error",
    description: "The result was not signed by the agent's key, or broke the output schema; the escrow was refunded.",
  },
  price_changed: {
    status: 409,
    type: "invalid_request_error",
    description:
      "The agent's on-chain price rose between the quote and the escrow; the program refused to charge more than the quote and nothing was charged. Retry to be quoted the new price.",
  },
  escrow_rejected: {
    status: 502,
    type: "api_error",
    description: "The program refused to open the escrow; nothing was charged. `detail` has its error.",
  },
  relayer_underfunded: {
    status: 503,
    type: "api_error",
    description: "The relayer's own SOL, which pays transaction fees and account rent, ran short; nothing was charged. Retry later.",
  },
  relayer_error: {
    status: 500,
    type: "api_error",
    description: "The relayer failed after the escrow opened (not the creator); the escrow was refunded.",
  },
  database_unavailable: {
    status: 503,
    type: "api_error",
    description: "The relayer's database did not answer; no escrow was opened by this request. Retry later.",
  },
  not_dispute_party: {
    status: 403,
    type: "permission_error",
    description: "Only the execution's payer and the agent's creator (and, to read, the market's arbiter) take part in its dispute.",
  },
  execution_not_disputable: {
    status: 409,
    type: "conflict_error",
    description: "Only a settled execution can be disputed: this one was refunded, failed or is still running.",
  },
  attachment_too_large: {
    status: 413,
    type: "invalid_request_error",
    description: "An evidence attachment is over 1 MiB once decoded; `param` names it.",
  },
  evidence_limit_reached: {
    status: 409,
    type: "conflict_error",
    description: "This party has already submitted the most evidence items one execution may have (10).",
  },
  evidence_quota_reached: {
    status: 409,
    type: "conflict_error",
    description:
      "The wallet's evidence files, across every execution, would pass its quota (50 MiB; `kept_bytes`, `quota_bytes`); nothing was stored. Files are purged once their dispute is resolved or its window closed.",
  },
  dispute_window_closed: {
    status: 409,
    type: "conflict_error",
    description: "The execution's dispute window has closed on chain and no dispute of it is open: evidence is no longer taken.",
  },
  webhook_url_not_allowed: {
    status: 400,
    type: "invalid_request_error",
    description:
      "The webhook URL is not an https URL without credentials or fragment (http too where the relayer allows local endpoints), or names an address the endpoint policy refuses.",
  },
  webhook_limit_reached: {
    status: 409,
    type: "conflict_error",
    description: "The wallet already has the most webhook endpoints one wallet may have (10): delete one first.",
  },
  rate_limited: {
    status: 429,
    type: "rate_limit_error",
    description: "Too many requests from this address or wallet; retry after the Retry-After header's seconds.",
  },
  internal_error: { status: 500, type: "api_error", description: "Something went wrong on our side." },
  chain_unavailable: {
    status: 503,
    type: "api_error",
    description: "The network's RPC did not answer; nothing was charged. Retry later.",
  },
  starter_agent_taken: {
    status: 409,
    type: "invalid_request_error",
    description: "Localnet's starter host already holds a key for this agent address, set up by another wallet.",
  },
  starter_agent_limit: {
    status: 429,
    type: "rate_limit_error",
    description: "The wallet (or the local marketplace) has as many starter agents as localnet's starter host keeps.",
  },
  starter_agent_unavailable: {
    status: 503,
    type: "api_error",
    description: "Localnet's starter host did not answer: is npm start still running?",
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error the API answers with; anything else thrown becomes `internal_error`. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;

  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].description,
    readonly param?: string,
    readonly details?: Record<string, unknown>,
    /** What went wrong underneath: logged, never sent. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ApiError";
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
  }
}

export interface ErrorBody {
  error: {
    type: ErrorType;
    code: ErrorCode;
    message: string;
    param?: string;
    request_id: string;
    [detail: string]: unknown;
  };
}

export function errorBody(error: ApiError, requestId: string): ErrorBody {
  return {
    error: {
      ...error.details,
      type: error.type,
      code: error.code,
      message: error.message,
      ...(error.param === undefined ? {} : { param: error.param }),
      request_id: requestId,
    },
  };
}
