// The market's parameters as admin actions change them. update_market replaces every field at
// once, so each action starts from the market as read, changes only what it was asked to, and
// shows exactly those fields before → after.
import { formatUsdc } from "@agent-market/client";
import { updateMarketInstruction, type Market, type MarketParams } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { CliError, UsageError } from "../io.js";
import { integerOption, usdcOption } from "../options.js";
import type { AdminContext } from "./admin-context.js";
import type { AdminPlan, Change, Value } from "./admin-plan.js";

/**
 * Every field update_market sets: the parameters, the treasury and the proposed authority (the
 * default key when none is proposed; the authority itself changes only by accept_market_authority).
 */
export interface MarketSettings {
  params: MarketParams;
  treasury: PublicKey;
  authority: PublicKey;
  pendingAuthority: PublicKey;
}

export function settingsOf(market: Market): MarketSettings {
  return {
    params: {
      relayer: market.relayer,
      arbiter: market.arbiter,
      minCollateralUsdc: market.minCollateralUsdc,
      minPricePerCallUsdc: market.minPricePerCallUsdc,
      escrowGraceSecs: market.escrowGraceSecs,
      disputeWindowSecs: market.disputeWindowSecs,
      collateralCooldownSecs: market.collateralCooldownSecs,
      escrowsPaused: market.escrowsPaused,
    },
    treasury: market.treasury,
    authority: market.authority,
    pendingAuthority: market.pendingAuthority,
  };
}

/** The fields as people and --json read them: the program's snake_case names, USDC as decimals. */
export function settingsView(settings: MarketSettings): [string, Value][] {
  const p = settings.params;
  return [
    ["authority", settings.authority.toBase58()],
    ["pending_authority", settings.pendingAuthority.equals(PublicKey.default) ? null : settings.pendingAuthority.toBase58()],
    ["treasury", settings.treasury.toBase58()],
    ["relayer", p.relayer.toBase58()],
    ["arbiter", p.arbiter.toBase58()],
    ["min_collateral_usdc", formatUsdc(p.minCollateralUsdc)],
    ["min_price_per_call_usdc", formatUsdc(p.minPricePerCallUsdc)],
    ["escrow_grace_secs", p.escrowGraceSecs],
    ["dispute_window_secs", p.disputeWindowSecs],
    ["collateral_cooldown_secs", p.collateralCooldownSecs],
    ["escrows_paused", p.escrowsPaused],
  ];
}

/** The fields that differ. */
export function changesBetween(before: MarketSettings, after: MarketSettings): Change[] {
  const old = new Map(settingsView(before));
  return settingsView(after)
    .filter(([field, value]) => old.get(field) !== value)
    .map(([field, value]) => ({ field, before: old.get(field)!, after: value }));
}

/** The update_market of `after`, refused when it would change nothing. */
export function updatePlan(ctx: AdminContext, action: string, market: Market, after: MarketSettings): AdminPlan {
  const changes = changesBetween(settingsOf(market), after);
  if (changes.length === 0) throw new CliError("nothing to change: the market has these values already", "agent-market admin show prints them");
  return {
    action,
    instructions: [
      updateMarketInstruction({
        programId: ctx.programId,
        authority: market.authority,
        treasury: after.treasury,
        params: after.params,
        // Proposing the authority itself withdraws a proposal; any other plan keeps the one made.
        newAuthority: after.pendingAuthority.equals(PublicKey.default) ? market.authority : after.pendingAuthority,
      }),
    ],
    changes,
  };
}

export function addressOption(text: string, name: string, usage: string): PublicKey {
  try {
    return new PublicKey(text);
  } catch {
    throw new UsageError(`${name} ${text} is not an address`, usage);
  }
}

/** u32 seconds, as the program stores its windows. */
export function secsOption(text: string, name: string, usage: string): number {
  return integerOption(text, name, usage, 0, 0xffff_ffff);
}

/** The parameter options init and update share: amounts in USDC, windows in seconds. */
export const PARAM_OPTIONS = {
  "min-collateral": { type: "string" },
  "min-price": { type: "string" },
  "escrow-grace-secs": { type: "string" },
  "dispute-window-secs": { type: "string" },
  "collateral-cooldown-secs": { type: "string" },
} as const;

interface ParamValues {
  "min-collateral"?: string;
  "min-price"?: string;
  "escrow-grace-secs"?: string;
  "dispute-window-secs"?: string;
  "collateral-cooldown-secs"?: string;
}

/** `params` with each parameter option given in its place. */
export function withParamOptions(params: MarketParams, values: ParamValues, usage: string): MarketParams {
  const next = { ...params };
  if (values["min-collateral"] !== undefined) next.minCollateralUsdc = usdcOption(values["min-collateral"], "--min-collateral", usage);
  if (values["min-price"] !== undefined) next.minPricePerCallUsdc = usdcOption(values["min-price"], "--min-price", usage);
  if (values["escrow-grace-secs"] !== undefined) next.escrowGraceSecs = secsOption(values["escrow-grace-secs"], "--escrow-grace-secs", usage);
  if (values["dispute-window-secs"] !== undefined) {
    next.disputeWindowSecs = secsOption(values["dispute-window-secs"], "--dispute-window-secs", usage);
  }
  if (values["collateral-cooldown-secs"] !== undefined) {
    next.collateralCooldownSecs = secsOption(values["collateral-cooldown-secs"], "--collateral-cooldown-secs", usage);
  }
  return next;
}
