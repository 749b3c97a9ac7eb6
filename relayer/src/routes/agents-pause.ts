import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { agentIdParams, errorResponses, listingObject, networkQuery } from "../http/schemas.js";

/** POST /v1/agents/:agent_id/pause */
export function registerAgentsPause(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents/:agent_id/pause",
    {
      schema: {
        summary: "Pause a listing",
        description: "Paused agents are not offered and refuse executions until resumed.",
        tags: ["agents"],
        security: [{ session: [] }],
        params: agentIdParams,
        querystring: networkQuery,
        response: { 200: listingObject, ...errorResponses(401, 403, 404, 409) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) =>
      services.listings.pause(request.walletSession!.wallet, request.query.network, request.params.agent_id),
  );
}
