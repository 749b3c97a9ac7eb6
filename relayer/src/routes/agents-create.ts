import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, jsonSchemaDocument, listingObject, network, pricing } from "../http/schemas.js";

export const listingFields = {
  name: { type: "string", minLength: 1, maxLength: 100 },
  description: { type: "string", minLength: 1, maxLength: 5000 },
  tags: {
    type: "array",
    maxItems: 20,
    uniqueItems: true,
    items: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,31}$" },
  },
  input_schema: jsonSchemaDocument,
  output_schema: jsonSchemaDocument,
  endpoint: { type: "string", minLength: 1, maxLength: 200 },
  signing_key: address,
  pricing,
  probe: {
    type: "object",
    additionalProperties: false,
    description: "What the conformance probe sends; by default a task of its own and parameters built from input_schema.",
    properties: {
      task: { type: "string", minLength: 1, maxLength: 10000 },
      parameters: { type: "object", additionalProperties: true },
    },
  },
} as const;

export const LISTING_CHECKLIST =
  "The checklist, in order, each step with its own error code: the agent account exists on that network " +
  "(agent_not_on_chain), was registered by this wallet (not_agent_creator), is active (agent_retired_on_chain), " +
  "holds the same signing key (signing_key_mismatch), pricing (pricing_mismatch), endpoint (endpoint_mismatch) and " +
  "the SHA-256 of the listing's canonical JSON {name, description, tags, input_schema, output_schema} " +
  "(listing_hash_mismatch); its collateral is at least the minimum (collateral_below_minimum); its receipt log exists, " +
  "paid by the creator (receipt_log_missing); the endpoint is a " +
  "public https URL (endpoint_not_allowed) that answers (endpoint_unreachable); and a marketplace-signed probe " +
  "comes back 200 (probe_http_error) with a valid execute response (probe_invalid_response), signed by the key " +
  "(probe_bad_signature), whose output matches output_schema (probe_output_invalid).";

/** POST /v1/agents: list an agent registered on-chain, after the whole creator checklist passes. */
export function registerAgentsCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents",
    {
      schema: {
        summary: "List an agent",
        description: LISTING_CHECKLIST,
        tags: ["agents"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["agent", "name", "description", "tags", "input_schema", "output_schema", "endpoint", "signing_key", "pricing"],
          additionalProperties: false,
          properties: { network: { ...network, default: "devnet" }, agent: address, ...listingFields },
        },
        response: { 201: listingObject, ...errorResponses(400, 401, 403, 409, 413, 415, 422, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const listing = await services.listings.create(request.walletSession!.wallet, request.body);
      reply.code(201);
      return listing;
    },
  );
}
