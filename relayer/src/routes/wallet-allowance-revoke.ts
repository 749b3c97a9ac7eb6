import { PublicKey } from "@solana/web3.js";

import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, network } from "../http/schemas.js";
import { unsignedTransaction } from "./wallet-allowance.js";

/** POST /v1/wallet/allowance/revoke: the unsigned SPL Token revoke of the allowance. */
export function registerWalletAllowanceRevoke(app: RouteApp, services: Services): void {
  app.post(
    "/v1/wallet/allowance/revoke",
    {
      schema: {
        summary: "Build the allowance revoke transaction",
        description: "Once it lands, no execution can debit the wallet on that network until a new approval.",
        tags: ["wallet"],
        security: [{ session: [] }],
        body: { type: "object", required: ["network"], additionalProperties: false, properties: { network } },
        response: { 200: unsignedTransaction, ...errorResponses(400, 401, 403, 413, 415, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => {
      const unsigned = await services.chain.revokeTransaction(request.body.network, new PublicKey(request.walletSession!.wallet));
      return { object: "unsigned_transaction" as const, ...unsigned, amount_usdc: "0.000000" };
    },
  );
}
