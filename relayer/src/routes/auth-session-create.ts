import type { Services } from "../app-services.js";
import { SESSION_COOKIE } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, timestamp } from "../http/schemas.js";

/** POST /v1/auth/session: step two of Sign-In With Solana. */
export function registerAuthSessionCreate(app: RouteApp, services: Services): void {
  app.post(
    "/v1/auth/session",
    {
      schema: {
        summary: "Finish a wallet sign-in",
        description:
          "Verifies the wallet's Ed25519 signature (base58) over the message from POST /v1/auth/nonce, consumes the " +
          "nonce and opens a session: an HttpOnly cookie for the dashboard and `token` for the CLI " +
          "(`Authorization: Bearer sess_…`).",
        tags: ["auth"],
        body: {
          type: "object",
          required: ["message", "signature"],
          additionalProperties: false,
          properties: {
            message: { type: "string", minLength: 1, maxLength: 2000 },
            signature: { type: "string", minLength: 64, maxLength: 100, pattern: "^[1-9A-HJ-NP-Za-km-z]+$" },
          },
        },
        response: {
          201: {
            type: "object",
            properties: {
              object: { const: "session" },
              id: { type: "string" },
              token: { type: "string" },
              wallet: address,
              created_at: timestamp,
              expires_at: timestamp,
            },
          },
          ...errorResponses(400, 401, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const { token, session } = await services.signIn.signIn(request.body.message, request.body.signature);
      reply.setCookie(SESSION_COOKIE, token, {
        httpOnly: true,
        // Strict keeps the cookie off every cross-site request, which with JSON-only bodies is
        // the CSRF defence.
        sameSite: "strict",
        secure: services.config.cookie_secure,
        path: "/v1",
        expires: new Date(session.expires_at),
      });
      reply.code(201);
      return { object: "session" as const, token, ...session };
    },
  );
}
