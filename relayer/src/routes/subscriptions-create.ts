import type { FastifyInstance } from "fastify";

import type { Services } from "../app.js";
import { requireApiKey } from "../http/auth.js";
import { address, agentIdParams, errorResponses, network, timestamp, usdcAmount } from "../http/schemas.js";

/** POST /v1/agents/:agent_id/subscription: buy a period of a subscription or hybrid plan. */
export function registerSubscriptionsCreate(app: FastifyInstance, services: Services): void {
  app.post<{ Params: { agent_id: string } }>(
    "/v1/agents/:agent_id/subscription",
    {
      schema: {
        summary: "Subscribe to an agent",
        description:
          "Pays one period of the agent's subscription or hybrid plan from the key's wallet (through its allowance), " +
          "split 99/1 at once. During the period, covered calls open zero-amount escrows; hybrid calls past the " +
          "included quota pay the overage price. Subscribing again starts a new period.",
        tags: ["executions"],
        security: [{ apiKey: [] }],
        params: agentIdParams,
        response: {
          200: {
            type: "object",
            properties: {
              object: { const: "subscription" },
              agent: address,
              wallet: address,
              network,
              expires_at: timestamp,
              included_calls_remaining: { type: "integer" },
              charge: {
                type: "object",
                properties: {
                  amount_usdc: usdcAmount,
                  creator_share_usdc: usdcAmount,
                  fee_usdc: usdcAmount,
                  currency: { const: "USDC" },
                },
              },
              transaction: { type: "string" },
            },
          },
          ...errorResponses(400, 401, 402, 404, 409, 502, 503),
        },
      },
      preHandler: requireApiKey(services.authenticator),
    },
    async (request) => services.executions.subscribe(request.apiKey!, request.params.agent_id),
  );
}
