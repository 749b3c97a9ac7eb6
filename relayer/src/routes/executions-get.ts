import type { Services } from "../app-services.js";
import { requireApiKeyOrSession } from "../http/auth.js";
import { executionObject } from "../http/execution-schemas.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";

/** GET /v1/executions/:execution_id: one of the calling wallet's executions. */
export function registerExecutionsGet(app: RouteApp, services: Services): void {
  app.get(
    "/v1/executions/:execution_id",
    {
      schema: {
        summary: "Get an execution",
        description: "Any key of the wallet that paid, or its session, can read it; other wallets get 404.",
        tags: ["executions"],
        security: [{ apiKey: [] }, { session: [] }],
        params: {
          type: "object",
          required: ["execution_id"],
          properties: { execution_id: { type: "string", pattern: "^exec_[1-9A-HJ-NP-Za-km-z]{16,24}$" } },
        },
        response: { 200: executionObject, ...errorResponses(400, 401, 404) },
      },
      preHandler: requireApiKeyOrSession(services.authenticator, services.signIn),
    },
    async (request) => services.executionReads.get(request.apiKey?.wallet ?? request.walletSession!.wallet, request.params.execution_id),
  );
}
