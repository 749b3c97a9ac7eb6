import type { Services } from "../app-services.js";
import { KEY_NETWORKS } from "../auth/api-keys.js";
import { ApiError } from "../errors.js";
import { requireSession } from "../http/auth.js";
import { requestUsdc } from "../http/request-usdc.js";
import type { RouteApp } from "../http/route-app.js";
import { apiKeyObject, errorResponses, usdcAmount } from "../http/schemas.js";

/** POST /v1/keys: a new API key, whose secret is in this response and nowhere else, ever. */
export function registerKeysCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/keys",
    {
      schema: {
        summary: "Create an API key",
        description:
          "Creates a key tied to the signed-in wallet. `secret` is shown once: store it in a secrets manager. " +
          "`test` keys run on devnet, `live` keys on mainnet. Optional spending cap (USDC) and expiry are enforced " +
          "on every execution.",
        tags: ["api keys"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["name", "environment"],
          additionalProperties: false,
          properties: {
            name: { type: "string", minLength: 1, maxLength: 100 },
            environment: { type: "string", enum: ["test", "live"] },
            spending_cap_usdc: usdcAmount,
            expires_at: { type: "string", format: "date-time" },
          },
        },
        response: {
          201: {
            type: "object",
            required: [...apiKeyObject.required, "secret"],
            properties: { ...apiKeyObject.properties, secret: { type: "string" } },
          },
          ...errorResponses(400, 401, 403, 413, 415),
        },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const body = request.body;
      services.chain.connection(KEY_NETWORKS[body.environment]);
      const spending_cap_usdc =
        body.spending_cap_usdc === undefined
          ? null
          : requestUsdc(body.spending_cap_usdc, "spending_cap_usdc", "spending_cap_usdc is above the largest u64 amount.");
      const expires_at = body.expires_at === undefined ? null : new Date(body.expires_at);
      if (expires_at && expires_at.getTime() <= Date.now()) {
        throw new ApiError("validation_failed", "expires_at must be in the future.", "expires_at");
      }
      const { key, secret } = await services.keys.create(request.walletSession!.wallet, {
        name: body.name,
        environment: body.environment,
        spending_cap_usdc,
        expires_at,
      });
      reply.code(201);
      return { ...key, secret };
    },
  );
}
