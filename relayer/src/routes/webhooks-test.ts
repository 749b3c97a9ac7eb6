import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";
import { webhookDeliveryObject, webhookIdParams } from "../http/webhook-schemas.js";

/** POST /v1/webhooks/:webhook_id/test: queues a `webhook.test` delivery to the endpoint. */
export function registerWebhooksTest(app: RouteApp, services: Services): void {
  app.post(
    "/v1/webhooks/:webhook_id/test",
    {
      schema: {
        summary: "Send a test event",
        description:
          "Queues a `webhook.test` delivery, signed, retried and recorded like any other; follow it in the " +
          "endpoint's deliveries. At most 20 an hour per endpoint (429 rate_limited).",
        tags: ["webhooks"],
        security: [{ session: [] }],
        params: webhookIdParams,
        response: { 202: webhookDeliveryObject, ...errorResponses(401, 403, 404, 429) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const delivery = await services.webhooks.test(request.walletSession!.wallet, request.params.webhook_id);
      reply.code(202);
      return delivery;
    },
  );
}
