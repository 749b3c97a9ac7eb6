import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { agentIdParams, errorResponses, listingObject, networkQuery } from "../http/schemas.js";

/** POST /v1/agents/:agent_id/resume */
export function registerAgentsResume(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents/:agent_id/resume",
    {
      schema: {
        summary: "Resume a listing",
        description: "Runs the checklist again (chain, collateral, endpoint, probe), then offers the agent again.",
        tags: ["agents"],
        security: [{ session: [] }],
        params: agentIdParams,
        querystring: networkQuery,
        response: { 200: listingObject, ...errorResponses(401, 403, 404, 409, 422, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) =>
      services.listings.resume(request.walletSession!.wallet, request.query.network, request.params.agent_id),
  );
}
