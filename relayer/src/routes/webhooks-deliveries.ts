import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, listOf, paginationQuery } from "../http/schemas.js";
import { webhookDeliveryObject, webhookIdParams } from "../http/webhook-schemas.js";

/** GET /v1/webhooks/:webhook_id/deliveries: the endpoint's deliveries, newest first, with their attempts. */
export function registerWebhooksDeliveries(app: RouteApp, services: Services): void {
  app.get(
    "/v1/webhooks/:webhook_id/deliveries",
    {
      schema: {
        summary: "List an endpoint's deliveries",
        description:
          "Each delivery (one event to this endpoint) with its status (pending, succeeded, failed), its next " +
          "attempt and every attempt made: when, how long, the receiver's HTTP status or why there was none.",
        tags: ["webhooks"],
        security: [{ session: [] }],
        params: webhookIdParams,
        querystring: { type: "object", additionalProperties: false, properties: paginationQuery },
        response: { 200: listOf(webhookDeliveryObject), ...errorResponses(400, 401, 403, 404) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => ({
      object: "list" as const,
      ...(await services.webhooks.deliveries(request.walletSession!.wallet, request.params.webhook_id, request.query)),
    }),
  );
}
