import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { agentIdParams, errorResponses, listingObject, networkQuery } from "../http/schemas.js";
import { LISTING_CHECKLIST, listingFields } from "./agents-create.js";

/** PATCH /v1/agents/:agent_id: change a listing (after update_agent on-chain, where terms change). */
export function registerAgentsUpdate(app: RouteApp, services: Services): void {
  app.patch(
    "/v1/agents/:agent_id",
    {
      schema: {
        summary: "Update a listing",
        description: `Fields left out keep their values; the merged listing goes through the checklist again. ${LISTING_CHECKLIST}`,
        tags: ["agents"],
        security: [{ session: [] }],
        params: agentIdParams,
        querystring: networkQuery,
        body: { type: "object", additionalProperties: false, minProperties: 1, properties: listingFields },
        response: { 200: listingObject, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) =>
      services.listings.update(request.walletSession!.wallet, request.query.network, request.params.agent_id, request.body),
  );
}
