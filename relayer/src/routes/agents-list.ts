import type { Services } from "../app-services.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, discoveredListingObject, listOf, network, paginationQuery } from "../http/schemas.js";

/** GET /v1/agents: discovery, public. */
export function registerAgentsList(app: RouteApp, services: Services): void {
  app.get(
    "/v1/agents",
    {
      schema: {
        summary: "List agents",
        description:
          "Listings newest first; filter by tag, by text in the name or description, and by status (active by default). " +
          "Each shows `health`, its status and 24 h figures from the network's indexer; `health` and `min_success_rate` filter, " +
          "and `sort` orders, by them (over the 1,000 newest matching listings).",
        tags: ["agents"],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            network: { ...network, default: "devnet" },
            status: { type: "string", enum: ["active", "paused", "retired"], default: "active" },
            tag: { type: "string", minLength: 1, maxLength: 32 },
            q: { type: "string", minLength: 1, maxLength: 100 },
            health: { type: "string", enum: ["operational", "degraded", "down", "no_data"] },
            min_success_rate: { type: "number", minimum: 0, maximum: 1 },
            sort: { type: "string", enum: ["newest", "success_rate", "latency_p50", "price"], default: "newest" },
            ...paginationQuery,
          },
        },
        response: { 200: listOf(discoveredListingObject), ...errorResponses(400, 503) },
      },
    },
    async (request) => ({ object: "list" as const, ...(await services.discovery.list(request.query)) }),
  );
}
