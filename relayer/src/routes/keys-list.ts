import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { apiKeyObject, errorResponses, listOf, paginationQuery } from "../http/schemas.js";

/** GET /v1/keys: the wallet's keys with their usage, newest first. */
export function registerKeysList(app: RouteApp, services: Services): void {
  app.get(
    "/v1/keys",
    {
      schema: {
        summary: "List API keys",
        description: "The signed-in wallet's keys: name, environment, prefix and last four characters, usage and status.",
        tags: ["api keys"],
        security: [{ session: [] }],
        querystring: { type: "object", additionalProperties: false, properties: paginationQuery },
        response: { 200: listOf(apiKeyObject), ...errorResponses(400, 401, 403) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => ({ object: "list" as const, ...(await services.keys.list(request.walletSession!.wallet, request.query)) }),
  );
}
