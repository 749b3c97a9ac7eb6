import type { Services } from "../app-services.js";
import type { RouteApp } from "../http/route-app.js";
import { agentIdParams, errorResponses, discoveredListingObject, networkQuery } from "../http/schemas.js";

/** GET /v1/agents/:agent_id: one listing, public. */
export function registerAgentsGet(app: RouteApp, services: Services): void {
  app.get(
    "/v1/agents/:agent_id",
    {
      schema: {
        summary: "Get an agent",
        description: "The listing with its schemas, pricing, collateral, minimum collateral, status, and `health`: its status and 24 h figures from the network's indexer (nulls and `unknown` without one). The id is the agent account's address.",
        tags: ["agents"],
        params: agentIdParams,
        querystring: networkQuery,
        response: { 200: discoveredListingObject, ...errorResponses(400, 404, 503) },
      },
    },
    async (request) => services.discovery.get(request.query.network, request.params.agent_id),
  );
}
