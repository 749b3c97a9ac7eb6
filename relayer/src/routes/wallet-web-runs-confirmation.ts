import type { Services } from "../app-services.js";
import { webRunStatement } from "../auth/web-run-keys.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, timestamp } from "../http/schemas.js";
import { ONE_CHANGE_AT_LEAST, servedNetwork, webRunChange, webRunChangeProperties } from "../http/web-runs.js";

/** POST /v1/wallet/web-runs/confirmation: the message a wallet signs to widen its web runs. */
export function registerWalletWebRunsConfirmation(app: RouteApp, services: Services): void {
  app.post(
    "/v1/wallet/web-runs/confirmation",
    {
      schema: {
        summary: "Ask for the message that confirms a web-run change",
        description:
          "Issues a single-use message stating the change in words, for the wallet to sign (wallet.signMessage) and " +
          "send with that same change to PATCH /v1/wallet/web-runs as `confirmation` before expires_at. It confirms " +
          "that change only, for this wallet only, once.",
        tags: ["wallet"],
        security: [{ session: [] }],
        body: { type: "object", required: ["network"], additionalProperties: false, anyOf: ONE_CHANGE_AT_LEAST, properties: webRunChangeProperties },
        response: {
          201: {
            type: "object",
            required: ["object", "statement", "nonce", "message", "issued_at", "expires_at"],
            additionalProperties: false,
            properties: {
              object: { type: "string", const: "wallet_confirmation" },
              statement: { type: "string" },
              nonce: { type: "string" },
              message: { type: "string" },
              issued_at: timestamp,
              expires_at: timestamp,
            },
          },
          ...errorResponses(400, 401, 403, 413, 415, 503),
        },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request, reply) => {
      const network = servedNetwork(services, request.body.network);
      const statement = webRunStatement(network, webRunChange(request.body));
      const confirmation = await services.confirmations.challenge(request.walletSession!.wallet, statement);
      reply.code(201);
      return { object: "wallet_confirmation" as const, statement, ...confirmation };
    },
  );
}
