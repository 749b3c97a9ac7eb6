import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";
import { webhookEndpointObject, webhookIdParams } from "../http/webhook-schemas.js";

/** DELETE /v1/webhooks/:webhook_id: the endpoint and its deliveries, queued ones too. */
export function registerWebhooksDelete(app: RouteApp, services: Services): void {
  app.delete(
    "/v1/webhooks/:webhook_id",
    {
      schema: {
        summary: "Delete a webhook endpoint",
        description: "Deletes the endpoint and its delivery history; nothing more is sent to it, not even what was queued.",
        tags: ["webhooks"],
        security: [{ session: [] }],
        params: webhookIdParams,
        response: { 200: webhookEndpointObject, ...errorResponses(401, 403, 404) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => services.webhooks.delete(request.walletSession!.wallet, request.params.webhook_id),
  );
}
