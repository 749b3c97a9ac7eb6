import type { FastifyInstance } from "fastify";

import type { Services } from "../app-services.js";
import { errorResponses, listingObject, listOf, network, paginationQuery } from "../http/schemas.js";
import type { ListQuery } from "../listings/listing-service.js";

/** GET /v1/agents: discovery, public. */
export function registerAgentsList(app: FastifyInstance, services: Services): void {
  app.get<{ Querystring: ListQuery }>(
    "/v1/agents",
    {
      schema: {
        summary: "List agents",
        description: "Listings newest first; filter by tag, by text in the name or description, and by status (active by default).",
        tags: ["agents"],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            network: { ...network, default: "devnet" },
            status: { type: "string", enum: ["active", "paused", "retired"], default: "active" },
            tag: { type: "string", minLength: 1, maxLength: 32 },
            q: { type: "string", minLength: 1, maxLength: 100 },
            ...paginationQuery,
          },
        },
        response: { 200: listOf(listingObject), ...errorResponses(400, 503) },
      },
    },
    async (request) => ({ object: "list", ...(await services.listings.list(request.query)) }),
  );
}
