import { PublicKey } from "@solana/web3.js";
import { formatUsdc } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { KEY_NETWORKS } from "../auth/api-keys.js";
import { ApiError } from "../errors.js";
import { requireSession } from "../http/auth.js";
import { requestUsdc } from "../http/request-usdc.js";
import type { RouteApp } from "../http/route-app.js";
import { errorResponses, network, usdcAmount } from "../http/schemas.js";

export const unsignedTransaction = {
  type: "object",
  required: ["object", "network", "transaction", "recent_blockhash", "last_valid_block_height", "amount_usdc"],
  properties: {
    object: { const: "unsigned_transaction" },
    network,
    transaction: { type: "string", description: "Base64 of the serialized legacy transaction; the wallet signs and sends it." },
    recent_blockhash: { type: "string" },
    last_valid_block_height: { type: "integer" },
    amount_usdc: usdcAmount,
  },
} as const;

/** POST /v1/wallet/allowance: the unsigned approveChecked that sets the program's allowance. */
export function registerWalletAllowance(app: RouteApp, services: Services): void {
  app.post(
    "/v1/wallet/allowance",
    {
      schema: {
        summary: "Build the allowance transaction",
        description:
          "An unsigned SPL Token approveChecked from the wallet's USDC account to the program's delegate, for the " +
          "wallet to sign. Without amount_usdc the allowance is the sum of the spending caps of the wallet's usable " +
          "keys on that network. Approving replaces any earlier allowance.",
        tags: ["wallet"],
        security: [{ session: [] }],
        body: {
          type: "object",
          required: ["network"],
          additionalProperties: false,
          properties: { network, amount_usdc: usdcAmount },
        },
        response: { 200: unsignedTransaction, ...errorResponses(400, 401, 403, 413, 415, 503) },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => {
      const wallet = request.walletSession!.wallet;
      const { network: name, amount_usdc } = request.body;
      let amount: bigint;
      if (amount_usdc !== undefined) {
        amount = requestUsdc(amount_usdc, "amount_usdc", "amount_usdc is above the largest u64 amount.");
      } else {
        const environment = name === KEY_NETWORKS.live ? "live" : "test";
        const caps = await services.keys.spendCapTotal(wallet, environment);
        if (caps.total_usdc === null || caps.keys === 0) {
          throw new ApiError(
            "validation_failed",
            caps.keys === 0
              ? `You have no usable ${environment} key; give amount_usdc.`
              : `A ${environment} key has no spending cap, so the caps do not add up to an allowance; give amount_usdc.`,
            "amount_usdc",
          );
        }
        amount = caps.total_usdc;
      }
      const unsigned = await services.chain.approveTransaction(name, new PublicKey(wallet), amount);
      return { object: "unsigned_transaction" as const, ...unsigned, amount_usdc: formatUsdc(amount) };
    },
  );
}
