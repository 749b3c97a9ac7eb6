import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, network, webRunSettings } from "../http/schemas.js";
import { servedNetwork } from "../http/web-runs.js";

/** GET /v1/wallet/web-runs: the session wallet's web runs on a network. */
export function registerWalletWebRuns(app: RouteApp, services: Services): void {
  app.get(
    "/v1/wallet/web-runs",
    {
      schema: {
        summary: "Read the wallet's web runs",
        description:
          "Whether the signed-in wallet's session may run agents on `network` (default devnet) and the spending cap of " +
          "its web-run key (10.000000 USDC until the wallet sets another), with what it spent.",
        tags: ["wallet"],
        security: [{ session: [] }],
        querystring: { type: "object", additionalProperties: false, properties: { network } },
        response: { 200: webRunSettings, ...errorResponses(400, 401, 403, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) =>
      services.webRunKeys.settings(request.walletSession!.wallet, servedNetwork(services, request.query.network ?? "devnet")),
  );
}
