// `agent-market admin init`: initialize_market, once per deployment. The authority signs and pays
// the rent; the program checks the parameters (InvalidMarketParams) and that the treasury is a
// token account of the mint.
import { initializeMarketInstruction, marketPda, type MarketParams } from "@agent-market/program";

import { CliError, type Io } from "../io.js";
import { parse, required } from "../options.js";
import { ADMIN_OPTIONS, adminContext, readMarket } from "./admin-context.js";
import { carryOut } from "./admin-plan.js";
import { addressOption, PARAM_OPTIONS, settingsView, withParamOptions } from "./admin-params.js";

export const INIT_USAGE = `agent-market admin init --keypair <authority file> --rpc <url> --usdc-mint <mint>
                        --treasury <token account> --relayer <address> --arbiter <address>
                        [--min-collateral <usdc>] [--min-price <usdc>] [--escrow-grace-secs <n>]
                        [--dispute-window-secs <n>] [--collateral-cooldown-secs <n>] [--paused]

Creates the market: the signer becomes its authority. Defaults: --min-collateral 100,
--min-price 0.01, --escrow-grace-secs 60, --dispute-window-secs 259200 (3 days),
--collateral-cooldown-secs 604800 (7 days), escrows open (--paused opens it paused). The treasury
is a USDC token account of --usdc-mint, where swept fees go. Next: agent-market admin shards.`;

const DEFAULTS = {
  "min-collateral": "100",
  "min-price": "0.01",
  "escrow-grace-secs": "60",
  "dispute-window-secs": String(3 * 24 * 3600),
  "collateral-cooldown-secs": String(7 * 24 * 3600),
};

export async function adminInit(args: string[], io: Io): Promise<void> {
  const { values } = parse(
    args,
    {
      ...ADMIN_OPTIONS,
      ...PARAM_OPTIONS,
      "usdc-mint": { type: "string" },
      treasury: { type: "string" },
      relayer: { type: "string" },
      arbiter: { type: "string" },
      paused: { type: "boolean", default: false },
    },
    INIT_USAGE,
  );
  const usdcMint = addressOption(required(values["usdc-mint"], "--usdc-mint", INIT_USAGE), "--usdc-mint", INIT_USAGE);
  const treasury = addressOption(required(values.treasury, "--treasury", INIT_USAGE), "--treasury", INIT_USAGE);
  const relayer = addressOption(required(values.relayer, "--relayer", INIT_USAGE), "--relayer", INIT_USAGE);
  const arbiter = addressOption(required(values.arbiter, "--arbiter", INIT_USAGE), "--arbiter", INIT_USAGE);
  const base: MarketParams = {
    relayer,
    arbiter,
    minCollateralUsdc: 0n,
    minPricePerCallUsdc: 0n,
    escrowGraceSecs: 0,
    disputeWindowSecs: 0,
    collateralCooldownSecs: 0,
    escrowsPaused: values.paused === true,
  };
  const params = withParamOptions(base, { ...DEFAULTS, ...definedOnly(values) }, INIT_USAGE);
  const ctx = await adminContext(io, values, INIT_USAGE);
  const market = marketPda(ctx.programId);
  if (await readMarket(ctx)) {
    throw new CliError(
      `the market ${market.toBase58()} exists already (program ${ctx.programId.toBase58()}): initialize_market runs once`,
      "change its parameters with agent-market admin update",
    );
  }
  const after = settingsView({ params, treasury, authority: ctx.signer.publicKey });
  await carryOut(ctx, {
    action: "init",
    instructions: [initializeMarketInstruction({ programId: ctx.programId, authority: ctx.signer.publicKey, usdcMint, treasury, params })],
    changes: [
      { field: "market", before: null, after: market.toBase58() },
      { field: "usdc_mint", before: null, after: usdcMint.toBase58() },
      ...after.map(([field, value]) => ({ field, before: null, after: value })),
    ],
  });
}

/** The parameter options actually given, so that the defaults fill only the others. */
function definedOnly(values: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(PARAM_OPTIONS).flatMap((name) => (typeof values[name] === "string" ? [[name, values[name] as string]] : [])),
  );
}
