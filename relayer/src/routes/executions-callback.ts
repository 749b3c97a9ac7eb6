import type { Services } from "../app-services.js";
import { requireApiKeyOrSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";
import { executionCallbackObject } from "../http/webhook-schemas.js";

/** GET /v1/executions/:execution_id/callback: the callback an async execution named, and its delivery. */
export function registerExecutionsCallback(app: RouteApp, services: Services): void {
  app.get(
    "/v1/executions/:execution_id/callback",
    {
      schema: {
        summary: "Get an execution's callback",
        description:
          "The `callback_url` an async execution named, and the delivery of its final event with every attempt " +
          "(null until the execution is final). Any key of the wallet that paid, or its session; other wallets, " +
          "and executions without a callback, get 404.",
        tags: ["executions"],
        security: [{ apiKey: [] }, { session: [] }],
        params: {
          type: "object",
          required: ["execution_id"],
          properties: { execution_id: { type: "string", pattern: "^exec_[1-9A-HJ-NP-Za-km-z]{16,24}$" } },
        },
        response: { 200: executionCallbackObject, ...errorResponses(400, 401, 404) },
      },
      preHandler: requireApiKeyOrSession(services.authenticator, services.signIn),
    },
    async (request) => services.webhooks.callback(request.apiKey?.wallet ?? request.walletSession!.wallet, request.params.execution_id),
  );
}
