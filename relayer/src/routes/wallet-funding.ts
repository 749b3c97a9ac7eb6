import { delegatePda, formatUsdc } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { Services } from "../app-services.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, network, networkQuery, usdcAmount } from "../http/schemas.js";

/** GET /v1/wallet/funding: what the wallet can pay on a network. */
export function registerWalletFunding(app: RouteApp, services: Services): void {
  app.get(
    "/v1/wallet/funding",
    {
      schema: {
        summary: "USDC balance and allowance",
        description:
          "The signed-in wallet's USDC balance on the network and the allowance it gave the program's delegate. " +
          "Executions are paid through that allowance; raise it with POST /v1/wallet/allowance.",
        tags: ["wallet"],
        security: [{ session: [] }],
        querystring: networkQuery,
        response: {
          200: {
            type: "object",
            required: [
              "object", "network", "wallet", "usdc_mint", "token_account", "token_account_exists", "delegate", "balance_usdc",
              "allowance_usdc",
            ],
            properties: {
              object: { const: "wallet_funding" },
              network,
              wallet: address,
              usdc_mint: address,
              token_account: address,
              token_account_exists: { type: "boolean" },
              delegate: address,
              balance_usdc: usdcAmount,
              allowance_usdc: usdcAmount,
            },
          },
          ...errorResponses(400, 401, 403, 503),
        },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => {
      const funding = await services.chain.walletFunding(
        request.query.network,
        new PublicKey(request.walletSession!.wallet),
      );
      return {
        object: "wallet_funding" as const,
        network: funding.network,
        wallet: funding.wallet.toBase58(),
        usdc_mint: funding.usdc_mint.toBase58(),
        token_account: funding.token_account.toBase58(),
        token_account_exists: funding.token_account_exists,
        delegate: delegatePda(services.chain.programId(funding.network)).toBase58(),
        balance_usdc: formatUsdc(funding.balance_usdc),
        allowance_usdc: formatUsdc(funding.allowance_usdc),
      };
    },
  );
}
