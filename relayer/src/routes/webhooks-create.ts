import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses } from "../http/schemas.js";
import { webhookEndpointObject, webhookEvent } from "../http/webhook-schemas.js";
import { MAX_URL_BYTES } from "../webhooks/webhook-endpoints.js";

/** POST /v1/webhooks: a new endpoint for the wallet's events, whose signing secret is in this response only. */
export function registerWebhooksCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/webhooks",
    {
      schema: {
        summary: "Create a webhook endpoint",
        description:
          "Registers a URL to receive the signed-in wallet's events (Standard Webhooks: `webhook-id`, " +
          "`webhook-timestamp`, `webhook-signature`). `secret` (`whsec_…`) is shown once: every delivery is signed " +
          "with it. https only (http too where the relayer allows local endpoints); at most 10 endpoints a wallet " +
          "(409 webhook_limit_reached).",
        tags: ["webhooks"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["url", "events"],
          additionalProperties: false,
          properties: {
            url: { type: "string", minLength: 1, maxLength: MAX_URL_BYTES },
            events: { type: "array", minItems: 1, maxItems: 5, items: webhookEvent },
            description: { type: "string", maxLength: 200 },
          },
        },
        response: {
          201: {
            ...webhookEndpointObject,
            required: [...webhookEndpointObject.required, "secret"],
            properties: { ...webhookEndpointObject.properties, secret: { type: "string" } },
          },
          ...errorResponses(400, 401, 403, 409, 413, 415),
        },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const created = await services.webhooks.create(request.walletSession!.wallet, request.body);
      reply.code(201);
      return created;
    },
  );
}
