import { formatUsdc } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { WEB_RUN_MAX_CAP_USDC } from "../auth/web-run-keys.js";
import { ApiError } from "../errors.js";
import { requireJsonWithCookie, requireSession } from "../http/auth.js";
import { requestUsdc } from "../http/request-usdc.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, network, usdcAmount, webRunSettings } from "../http/schemas.js";
import { servedNetwork } from "../http/web-runs.js";

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
          "request on, on every relayer, a session's execute is 403 web_runs_revoked; `enabled: true` allows them again.",
        tags: ["wallet"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["network"],
          additionalProperties: false,
          minProperties: 2,
          properties: { network, spending_cap_usdc: usdcAmount, enabled: { type: "boolean" } },
        },
        response: { 200: webRunSettings, ...errorResponses(400, 401, 403, 413, 415, 503) },
      },
      onRequest: requireJsonWithCookie,
      preHandler: requireSession(services.signIn),
    },
    async (request) => {
      const { spending_cap_usdc, enabled } = request.body;
      let cap: bigint | undefined;
      if (spending_cap_usdc !== undefined) {
        const tooLarge = `spending_cap_usdc must be at most ${formatUsdc(WEB_RUN_MAX_CAP_USDC)}.`;
        cap = requestUsdc(spending_cap_usdc, "spending_cap_usdc", tooLarge);
        if (cap > WEB_RUN_MAX_CAP_USDC) throw new ApiError("validation_failed", tooLarge, "spending_cap_usdc");
      }
      return services.webRunKeys.update(request.walletSession!.wallet, servedNetwork(services, request.body.network), {
        ...(cap === undefined ? {} : { spending_cap_usdc: cap }),
        ...(enabled === undefined ? {} : { enabled }),
      });
    },
  );
}
