import { FEE_BPS, formatUsdc } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import type { Services } from "../app-services.js";
import type { RouteApp } from "../http/route-app.js";
import { address, errorResponses, network, usdcAmount } from "../http/schemas.js";

const KEY_PREFIX = { devnet: "svc_test_", mainnet: "svc_live_" } as const;

/** GET /v1/marketplace: what a client or creator needs to know before its first call. */
export function registerMarketplace(app: RouteApp, services: Services): void {
  app.get(
    "/v1/marketplace",
    {
      schema: {
        summary: "The marketplace's configuration",
        description:
          "Networks served, each network's program id, USDC mint and minimum collateral, the fee, and the key that " +
          "signs requests to creators (creators check it on every POST /execute).",
        tags: ["marketplace"],
        response: {
          200: {
            type: "object",
            required: ["object", "api_version", "program_id", "fee_bps", "request_signing_key", "networks"],
            properties: {
              object: { const: "marketplace" },
              api_version: { type: "string" },
              program_id: address,
              fee_bps: { type: "integer" },
              request_signing_key: address,
              networks: {
                type: "array",
                items: {
                  type: "object",
                  required: [
                    "name", "program_id", "key_prefix", "usdc_mint", "treasury", "relayer", "request_signing_key",
                    "minimum_collateral_usdc", "escrow_grace_secs", "dispute_window_secs", "escrows_paused",
                  ],
                  properties: {
                    name: network,
                    program_id: address,
                    key_prefix: { type: "string" },
                    usdc_mint: address,
                    treasury: address,
                    relayer: address,
                    request_signing_key: address,
                    minimum_collateral_usdc: usdcAmount,
                    escrow_grace_secs: { type: "integer" },
                    dispute_window_secs: { type: "integer" },
                    escrows_paused: { type: "boolean" },
                  },
                },
              },
            },
          },
          ...errorResponses(503),
        },
      },
    },
    async () => {
      const networks = await Promise.all(
        services.chain.networks.map(async (name) => {
          const market = await services.chain.market(name);
          return {
            name,
            program_id: services.chain.programId(name).toBase58(),
            key_prefix: KEY_PREFIX[name],
            usdc_mint: market.usdcMint.toBase58(),
            treasury: market.treasury.toBase58(),
            relayer: market.relayer.toBase58(),
            request_signing_key: utils.bytes.bs58.encode(services.config.networks[name]!.marketplace_public_key),
            minimum_collateral_usdc: formatUsdc(market.minCollateralUsdc),
            escrow_grace_secs: market.escrowGraceSecs,
            dispute_window_secs: market.disputeWindowSecs,
            escrows_paused: market.escrowsPaused,
          };
        }),
      );
      return {
        object: "marketplace" as const,
        api_version: "v1",
        // Each network has its own (networks[].program_id); this one, the first network's, predates them.
        program_id: networks[0]!.program_id,
        fee_bps: Number(FEE_BPS),
        // Each network has its own key (networks[].request_signing_key); this one, devnet's when
        // devnet is served, predates them.
        request_signing_key: networks[0]!.request_signing_key,
        networks,
      };
    },
  );
}
