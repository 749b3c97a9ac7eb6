import type { FastifyInstance } from "fastify";

import type { Services } from "../app-services.js";
import { requireApiKey } from "../http/auth.js";
import { subscriptionObject } from "../http/execution-schemas.js";
import { agentIdParams, errorResponses } from "../http/schemas.js";

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
          200: subscriptionObject,
          ...errorResponses(400, 401, 402, 404, 409, 502, 503),
        },
      },
      preHandler: requireApiKey(services.authenticator),
    },
    async (request) => services.subscriptions.subscribe(request.apiKey!, request.params.agent_id),
  );
}
