import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { agentIdParams, errorResponses, listingObject, networkQuery } from "../http/schemas.js";

/** POST /v1/agents/:agent_id/retire */
export function registerAgentsRetire(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents/:agent_id/retire",
    {
      schema: {
        summary: "Retire a listing",
        description: "For good: the listing stays readable with status retired. Retire the agent on-chain (retire_agent) to start the collateral cooldown.",
        tags: ["agents"],
        security: [{ session: [] }],
        params: agentIdParams,
        querystring: networkQuery,
        response: { 200: listingObject, ...errorResponses(401, 403, 404, 409) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) =>
      services.listings.retire(request.walletSession!.wallet, request.query.network, request.params.agent_id),
  );
}
