import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, timestamp } from "../http/schemas.js";

export const sessionObject = {
  type: "object",
  required: ["object", "id", "wallet", "created_at", "expires_at"],
  properties: {
    object: { const: "session" },
    id: { type: "string" },
    wallet: address,
    created_at: timestamp,
    expires_at: timestamp,
  },
} as const;

/** GET /v1/auth/session: the signed-in wallet. */
export function registerAuthSessionGet(app: RouteApp, services: Services): void {
  app.get(
    "/v1/auth/session",
    {
      schema: {
        summary: "The current wallet session",
        tags: ["auth"],
        security: [{ session: [] }],
        response: { 200: sessionObject, ...errorResponses(401, 403) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => ({ object: "session" as const, ...request.walletSession! }),
  );
}
