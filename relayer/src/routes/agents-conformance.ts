import { MAX_EXECUTION_SECS } from "@agent-market/program";
import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, network } from "../http/schemas.js";
import { listingFields } from "./agents-create.js";

/**
 * POST /v1/agents/conformance: the listing's endpoint and interface steps alone, before the agent
 * is registered, so a creator finds a wrong key or an unreachable service before locking
 * collateral. The probe is a marketplace-signed request, so only the signing key's holder, signed
 * in as the agent's creator, may have it sent (key_proof, or the agent on chain under this wallet
 * with this key); its task and parameters are the relayer's, and it counts as a listing write
 * against the rate limit.
 */
export function registerAgentsConformance(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents/conformance",
    {
      schema: {
        summary: "Probe an endpoint as listing will",
        description:
          "Sends the marketplace-signed conformance probe that listing sends, for the agent address about to be registered: " +
          "the probe task with parameters built from input_schema. Unless the agent is on chain, registered by this wallet " +
          "with this signing key, key_proof must be the key's signature over the signing-key proof of the agent and this " +
          "wallet (key_proof_required, invalid_key_proof; not_agent_creator if another wallet registered it). " +
          "Fails with the listing checklist's codes: endpoint_not_allowed, endpoint_unreachable, probe_http_error, " +
          "probe_invalid_response, probe_bad_signature, probe_output_invalid, probe_parameters_unavailable.",
        tags: ["agents"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["agent", "endpoint", "signing_key", "input_schema", "output_schema", "max_execution_secs"],
          additionalProperties: false,
          properties: {
            network: { ...network, default: "devnet" },
            agent: address,
            endpoint: listingFields.endpoint,
            signing_key: listingFields.signing_key,
            input_schema: listingFields.input_schema,
            output_schema: listingFields.output_schema,
            key_proof: {
              type: "string",
              minLength: 1,
              maxLength: 100,
              description: "base58 of the signing key's Ed25519 signature over the signing-key proof (agent-market key-proof).",
            },
            max_execution_secs: { type: "integer", minimum: 1, maximum: MAX_EXECUTION_SECS },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["ok", "latency_ms"],
            additionalProperties: false,
            properties: { ok: { type: "boolean", const: true }, latency_ms: { type: "integer" } },
          },
          ...errorResponses(400, 401, 403, 413, 415, 422, 429, 503),
        },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => ({
      ok: true as const,
      latency_ms: await services.listings.conformance(request.walletSession!.wallet, request.body),
    }),
  );
}
