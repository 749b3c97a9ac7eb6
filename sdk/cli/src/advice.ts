// What to do after each error the API can answer a creator or a consumer, in the CLI's terms.
import { AgentMarketError, ConnectionError } from "@agent-market/client";

export interface AdviceContext {
  agent?: string;
  endpoint?: string;
  /** The marketplace's request signing key, for a probe that was refused. */
  marketplaceKey?: string;
}

const ON_CHAIN_TERMS =
  "the listing must repeat the agent account's terms: pass the same --signing-key, --endpoint, --price and --listing " +
  "as at registration (or change the account with update_agent first)";

const SIGN_IN = "sign in again: agent-market login --keypair <wallet file> --api <url>";
const USE_A_KEY = "pass a valid API key with --api-key or AGENT_MARKET_API_KEY (agent-market keys create makes one)";

const ADVICE: Record<string, (context: AdviceContext) => string> = {
  agent_already_listed: (c) => `it is listed already: agent-market status --agent ${c.agent ?? "<agent>"}`,
  listing_retired: () => "a retired listing cannot change: register a new agent",
  agent_not_on_chain: () => "the API reads another cluster than --rpc: point --rpc at the API's network",
  not_agent_creator: () => "sign in with the wallet that registered the agent (--keypair)",
  agent_retired_on_chain: () => "the agent account is retired: register a new agent",
  signing_key_mismatch: () => ON_CHAIN_TERMS,
  pricing_mismatch: () => ON_CHAIN_TERMS,
  endpoint_mismatch: () => ON_CHAIN_TERMS,
  listing_hash_mismatch: () => ON_CHAIN_TERMS,
  collateral_below_minimum: () => "top up the agent's collateral (top_up_collateral) to at least the marketplace minimum",
  endpoint_not_allowed: () =>
    "the endpoint must be a public https URL without credentials or fragment (no private, loopback or link-local address)",
  endpoint_unreachable: (c) =>
    `start your service and make sure ${c.endpoint ?? "the endpoint"}/execute answers from the internet within the time limit; ` +
    "agent-market check tests it from your machine",
  probe_parameters_unavailable: () => "add examples or defaults to the input schema's required properties",
  probe_http_error: (c) =>
    `your service refused the probe: start it trusting the marketplace key ${c.marketplaceKey ?? "(request_signing_key of GET /v1/marketplace)"}, ` +
    "then agent-market check it",
  probe_invalid_response: () => "the answer is not a valid execute response (docs/execute-protocol.md): agent-market check shows which part",
  probe_bad_signature: () => "your service signs with another key than --signing-key: start it with that key",
  probe_output_invalid: () => "your service's output breaks the output schema: fix one or the other (agent-market check shows where)",
  invalid_schema: () => "fix the schema in the listing file: a JSON Schema 2020-12 document; the input schema of an object",
  validation_failed: () => "fix the field the error names (param) and run the command again",
  chain_unavailable: () => "the API cannot reach its RPC: try again in a moment",
  session_required: () => SIGN_IN,
  invalid_session: () => SIGN_IN,
  api_key_not_allowed: () => SIGN_IN,
  missing_authorization: () => USE_A_KEY,
  malformed_api_key: () => USE_A_KEY,
  unknown_api_key: () => USE_A_KEY,
  revoked_api_key: () => USE_A_KEY,
  expired_api_key: () => USE_A_KEY,
  api_key_required: () => USE_A_KEY,
  network_not_configured: () => "this API does not serve that network: pass --network devnet (or a relayer that serves it)",
};

/** The next step after `error`, or undefined when there is nothing better than its message. */
export function adviceFor(error: unknown, context: AdviceContext = {}): string | undefined {
  if (error instanceof ConnectionError) return "check the API URL (--api) and your connection, then try again";
  if (error instanceof AgentMarketError) return ADVICE[error.code]?.(context);
  return undefined;
}
