import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, listOf } from "../http/schemas.js";
import { webhookEndpointObject } from "../http/webhook-schemas.js";

/** GET /v1/webhooks: the wallet's endpoints (at most 10, so one page), newest first, without their secrets. */
export function registerWebhooksList(app: RouteApp, services: Services): void {
  app.get(
    "/v1/webhooks",
    {
      schema: {
        summary: "List webhook endpoints",
        description: "The signed-in wallet's webhook endpoints, newest first; a secret is never shown again.",
        tags: ["webhooks"],
        security: [{ session: [] }],
        response: { 200: listOf(webhookEndpointObject), ...errorResponses(401, 403) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => ({ object: "list" as const, data: await services.webhooks.list(request.walletSession!.wallet), has_more: false }),
  );
}
