import type { Services } from "../app-services.js";
import { webRunStatement, widens } from "../auth/web-run-keys.js";
import { ApiError } from "../errors.js";
import { requireJsonWithCookie, requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, webRunSettings } from "../http/schemas.js";
import { ONE_CHANGE_AT_LEAST, servedNetwork, webRunChange, webRunChangeProperties } from "../http/web-runs.js";

/** PATCH /v1/wallet/web-runs: set the web-run cap, revoke web runs or enable them again. */
export function registerWalletWebRunsUpdate(app: RouteApp, services: Services): void {
  app.patch(
    "/v1/wallet/web-runs",
    {
      schema: {
        summary: "Set the wallet's web-run cap, or revoke web runs",
        description:
          "`spending_cap_usdc` bounds everything the wallet's web runs on `network` spend, counted from the first " +
          "(402 spending_cap_reached past it, nothing charged). `enabled: false` revokes web runs: from the next " +
          "request on, on every relayer, a session's execute is 403 web_runs_revoked; `enabled: true` allows them again. " +
          "Raising the cap or allowing web runs again needs `confirmation`: the wallet's signature over the message " +
          "POST /v1/wallet/web-runs/confirmation issued for this very change (403 wallet_signature_required without it, " +
          "invalid_confirmation when it is not that); lowering the cap or revoking needs the session alone.",
        tags: ["wallet"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["network"],
          additionalProperties: false,
          anyOf: ONE_CHANGE_AT_LEAST,
          properties: {
            ...webRunChangeProperties,
            confirmation: {
              type: "object",
              required: ["message", "signature"],
              additionalProperties: false,
              properties: { message: { type: "string", maxLength: 2_000 }, signature: { type: "string", maxLength: 100 } },
            },
          },
        },
        response: { 200: webRunSettings, ...errorResponses(400, 401, 403, 413, 415, 503) },
      },
      onRequest: requireJsonWithCookie,
      preHandler: requireSession(services.signIn),
    },
    async (request) => {
      const wallet = request.walletSession!.wallet;
      const network = servedNetwork(services, request.body.network);
      const change = webRunChange(request.body);
      const { confirmation } = request.body;
      if (confirmation) {
        await services.confirmations.confirm(wallet, webRunStatement(network, change), confirmation);
      } else if (widens(await services.webRunKeys.settings(wallet, network), change)) {
        throw new ApiError(
          "wallet_signature_required",
          `${webRunStatement(network, change)} needs the wallet's signature: POST /v1/wallet/web-runs/confirmation, sign its message, and send it as confirmation.`,
          "confirmation",
        );
      }
      return services.webRunKeys.update(wallet, network, change);
    },
  );
}
