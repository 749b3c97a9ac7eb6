import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { apiKeyObject, errorResponses } from "../http/schemas.js";

export const keyIdParams = {
  type: "object",
  required: ["key_id"],
  properties: { key_id: { type: "string", minLength: 1, maxLength: 100 } },
} as const;

/** GET /v1/keys/:key_id: one of the wallet's keys. */
export function registerKeysGet(app: RouteApp, services: Services): void {
  app.get(
    "/v1/keys/:key_id",
    {
      schema: {
        summary: "Inspect an API key",
        description: "Another wallet's key answers 404, exactly like a key that does not exist.",
        tags: ["api keys"],
        security: [{ session: [] }],
        params: keyIdParams,
        response: { 200: apiKeyObject, ...errorResponses(401, 403, 404) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => services.keys.get(request.walletSession!.wallet, request.params.key_id),
  );
}
