import type { Services } from "../app-services.js";
import { requireSession, SESSION_COOKIE } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses } from "../http/schemas.js";

/** DELETE /v1/auth/sessions: sign out everywhere; every session of the wallet is refused from then on. */
export function registerAuthSessionsDelete(app: RouteApp, services: Services): void {
  app.delete(
    "/v1/auth/sessions",
    {
      schema: {
        summary: "Sign out everywhere",
        description:
          "Revokes every session of the signed-in wallet (this one included, in every browser and CLI) at once, whichever " +
          "relayer the next request reaches: what to do when a session may have been stolen. API keys are not affected.",
        tags: ["auth"],
        security: [{ session: [] }],
        response: {
          200: {
            type: "object",
            required: ["object", "wallet", "revoked_count"],
            additionalProperties: false,
            properties: { object: { type: "string", const: "sessions_revoked" }, wallet: address, revoked_count: { type: "integer" } },
          },
          ...errorResponses(401, 403),
        },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const wallet = request.walletSession!.wallet;
      const revoked_count = await services.signIn.signOutEverywhere(wallet);
      reply.clearCookie(SESSION_COOKIE, { path: "/v1" });
      return { object: "sessions_revoked" as const, wallet, revoked_count };
    },
  );
}
