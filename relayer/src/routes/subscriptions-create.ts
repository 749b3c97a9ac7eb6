import type { Services } from "../app-services.js";
import { ApiError, type ErrorCode } from "../errors.js";
import { renderPurchase } from "../executions/subscription-service.js";
import { requireApiKey } from "../http/auth.js";
import { subscriptionObject } from "../http/execution-schemas.js";
import { idempotencyKeyOf } from "../http/idempotency.js";
import { requestUsdc } from "../http/request-usdc.js";
import type { RouteApp } from "../http/route-app.js";
import { agentIdParams, errorResponses, usdcAmount } from "../http/schemas.js";

function maxPrice(text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  return requestUsdc(text, "max_price_usdc", "max_price_usdc is above the largest amount.");
}

/** POST /v1/agents/:agent_id/subscription: buy a period of a subscription or hybrid plan. */
export function registerSubscriptionsCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/agents/:agent_id/subscription",
    {
      schema: {
        summary: "Subscribe to an agent",
        description:
          "Pays one period of the agent's subscription or hybrid plan from the key's wallet (through its allowance), " +
          "split 99/1 at once. During the period, covered calls open zero-amount escrows; hybrid calls past the " +
          "included quota pay the overage price. Subscribing again starts a new period. Send an Idempotency-Key to " +
          "retry safely: a replay returns the first answer and never pays twice; the same key for another agent is " +
          "409 idempotency_key_reused. 202: the payment was sent but its outcome is not known yet; the purchase " +
          "ends by itself (`status` pending, then succeeded or failed) and a replay with the key shows where it stands. " +
          "`max_price_usdc` (optional body) is the most the period may cost, as shown: a higher period price is 409 " +
          "price_above_maximum before anything is sent.",
        tags: ["executions"],
        security: [{ apiKey: [] }],
        params: agentIdParams,
        body: {
          type: ["object", "null"],
          additionalProperties: false,
          properties: { max_price_usdc: { ...usdcAmount, description: "The most the period may cost, as shown to the caller." } },
        },
        response: {
          200: subscriptionObject,
          202: subscriptionObject,
          ...errorResponses(400, 401, 402, 404, 409, 429, 502, 503),
        },
      },
      preHandler: requireApiKey(services.authenticator),
    },
    async (request, reply) => {
      const { row, replayed } = await services.subscriptions.subscribe(
        request.apiKey!,
        request.params.agent_id,
        idempotencyKeyOf(request.headers),
        maxPrice(request.body?.max_price_usdc),
      );
      if (replayed) reply.header("Idempotent-Replayed", "true");
      const body = renderPurchase(row);
      if (body.status === "failed") {
        throw new ApiError((row.failure_code ?? "internal_error") as ErrorCode, row.failure_message ?? undefined, undefined, {
          subscription: body,
        });
      }
      return reply.code(body.status === "succeeded" ? 200 : 202).send({ ...body, status: body.status });
    },
  );
}
