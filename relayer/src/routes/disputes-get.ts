import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import { disputeObject, executionId } from "../http/dispute-schemas.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";

/**
 * GET /v1/disputes/:execution_id: the dispute as the chain has it, with the evidence kept here.
 * A recorded outcome costs no RPC call; otherwise one read of the Dispute account, shared by every
 * read of it within a second; never the address's history. Limited per wallet and per address
 * (http/rate-limit.ts).
 */
export function registerDisputesGet(app: RouteApp, services: Services): void {
  app.get(
    "/v1/disputes/:execution_id",
    {
      schema: {
        summary: "Get an execution's dispute",
        description: "For the execution's payer, its agent's creator and the market's arbiter; state none when no dispute was opened.",
        tags: ["disputes"],
        security: [{ session: [] }],
        params: { type: "object", required: ["execution_id"], properties: { execution_id: executionId } },
        response: { 200: disputeObject, ...errorResponses(400, 401, 403, 404, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => services.disputes.get(request.walletSession!.wallet, request.params.execution_id),
  );
}
