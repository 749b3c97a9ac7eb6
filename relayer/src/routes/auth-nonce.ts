import type { Services } from "../app-services.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, timestamp } from "../http/schemas.js";

/** POST /v1/auth/nonce: step one of Sign-In With Solana. */
export function registerAuthNonce(app: RouteApp, services: Services): void {
  app.post(
    "/v1/auth/nonce",
    {
      schema: {
        summary: "Start a wallet sign-in",
        description:
          "Issues a single-use nonce and the exact Sign-In With Solana message for the wallet to sign " +
          "(wallet.signMessage); send both to POST /v1/auth/session before expires_at.",
        tags: ["auth"],
        body: {
          type: "object",
          required: ["wallet"],
          additionalProperties: false,
          properties: { wallet: address },
        },
        response: {
          201: {
            type: "object",
            properties: {
              object: { const: "sign_in_challenge" },
              wallet: address,
              nonce: { type: "string" },
              message: { type: "string" },
              issued_at: timestamp,
              expires_at: timestamp,
            },
          },
          ...errorResponses(400, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const challenge = await services.signIn.challenge(request.body.wallet);
      reply.code(201);
      return { object: "sign_in_challenge" as const, ...challenge };
    },
  );
}
