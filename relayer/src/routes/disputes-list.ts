import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import { disputeObject, executionId } from "../http/dispute-schemas.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, listOf } from "../http/schemas.js";

/**
 * GET /v1/disputes: the disputes the session's wallet takes part in, in one role. One scan of the
 * caller's Dispute accounts per network (per agent for a creator), none per dispute listed.
 * Limited with the reads of one dispute (http/rate-limit.ts).
 */
export function registerDisputesList(app: RouteApp, services: Services): void {
  app.get(
    "/v1/disputes",
    {
      schema: {
        summary: "List disputes",
        description:
          "role payer: executions the wallet paid; creator: of its agents; arbiter: every dispute of the markets it arbitrates. " +
          "Newest execution first; page with starting_after (the last execution_id seen).",
        tags: ["disputes"],
        security: [{ session: [] }],
        querystring: {
          type: "object",
          required: ["role"],
          additionalProperties: false,
          properties: {
            role: { type: "string", enum: ["payer", "creator", "arbiter"] },
            state: { type: "string", enum: ["open", "resolved"] },
            limit: { type: "integer", minimum: 1, maximum: 100, default: 50 },
            starting_after: executionId,
          },
        },
        response: { 200: listOf(disputeObject), ...errorResponses(400, 401, 403, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => services.disputes.list(request.walletSession!.wallet, request.query),
  );
}
