import type { Services } from "../app-services.js";
import { requireSession, SESSION_COOKIE } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";
import { sessionObject } from "./auth-session-get.js";

/** DELETE /v1/auth/session: sign out; the token is refused from then on. */
export function registerAuthSessionDelete(app: RouteApp, services: Services): void {
  app.delete(
    "/v1/auth/session",
    {
      schema: {
        summary: "Sign out",
        description: "Revokes the session at once, whichever relayer the next request reaches.",
        tags: ["auth"],
        security: [{ session: [] }],
        response: { 200: sessionObject, ...errorResponses(401, 403) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const session = request.walletSession!;
      await services.signIn.signOut(session.id);
      reply.clearCookie(SESSION_COOKIE, { path: "/v1" });
      return { object: "session" as const, ...session };
    },
  );
}
