import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { apiKeyObject, errorResponses } from "../http/schemas.js";
import { keyIdParams } from "./keys-get.js";

/** DELETE /v1/keys/:key_id: revoke a key, effective for the very next request on every relayer. */
export function registerKeysRevoke(app: RouteApp, services: Services): void {
  app.delete(
    "/v1/keys/:key_id",
    {
      schema: {
        summary: "Revoke an API key",
        description:
          "Revocation is committed before this answers and every relayer verifies keys against the database on " +
          "every request, so the next request with the key is refused. Executions already running finish.",
        tags: ["api keys"],
        security: [{ session: [] }],
        params: keyIdParams,
        response: { 200: apiKeyObject, ...errorResponses(401, 403, 404) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => services.keys.revoke(request.walletSession!.wallet, request.params.key_id),
  );
}
