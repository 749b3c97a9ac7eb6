import type { Services } from "../app-services.js";
import { requireApiKey } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, network } from "../http/schemas.js";

/** GET /v1/whoami: the API key a request authenticates as (for SDKs and deployment checks). */
export function registerWhoami(app: RouteApp, services: Services): void {
  app.get(
    "/v1/whoami",
    {
      schema: {
        summary: "The calling API key",
        description: "Checks an API key and tells which wallet and network it bills; it never returns the key.",
        tags: ["api keys"],
        security: [{ apiKey: [] }],
        response: {
          200: {
            type: "object",
            required: ["object", "key_id", "name", "environment", "network", "wallet"],
            properties: {
              object: { const: "api_key_identity" },
              key_id: { type: "string" },
              name: { type: "string" },
              environment: { type: "string", enum: ["test", "live"] },
              network,
              wallet: address,
            },
          },
          ...errorResponses(401),
        },
      },
      preHandler: requireApiKey(services.authenticator),
    },
    async (request) => {
      const key = request.apiKey!;
      return {
        object: "api_key_identity" as const,
        key_id: key.id,
        name: key.name,
        environment: key.environment,
        network: key.network,
        wallet: key.wallet,
      };
    },
  );
}
