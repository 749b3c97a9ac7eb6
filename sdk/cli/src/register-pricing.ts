// The terms `register` registers and lists an agent at, from its options: a fixed price per call
// (--price), or metered (--price-per-unit, --unit, --max-units-per-call). The program holds the
// prices; the listing repeats them and, for a metered agent, names its unit, shown to callers.
import { formatUsdc, type Pricing as ListingPricing } from "@agent-market/client";
import type { Pricing } from "@agent-market/program";

import { UsageError } from "./io.js";
import { positiveU64Option, usdcOption } from "./options.js";

const U64_MAX = (1n << 64n) - 1n;
/** The relayer's rule for a unit's name: 1–24 characters, no space at either end. */
const UNIT = /^\S(.{0,22}\S)?$/u;

export interface RegisterPricing {
  /** The agent account's Pricing. */
  chain: Pricing;
  /** The listing's `pricing`. */
  listing: ListingPricing;
  /** The most one call costs, which the market's minimum price per call bounds. */
  mostPerCallUsdc: bigint;
}

export interface PricingOptions {
  price?: string;
  "price-per-unit"?: string;
  unit?: string;
  "max-units-per-call"?: string;
}

export function registerPricing(values: PricingOptions, usage: string): RegisterPricing {
  const meteredGiven = [values["price-per-unit"], values.unit, values["max-units-per-call"]].filter((v) => v !== undefined).length;
  if (values.price !== undefined) {
    if (meteredGiven > 0) throw new UsageError("--price is a fixed price per call: leave out the metered options", usage);
    const price = usdcOption(values.price, "--price", usage);
    return { chain: { kind: "PayPerUse", priceUsdc: price }, listing: { model: "pay_per_use", price_usdc: formatUsdc(price) }, mostPerCallUsdc: price };
  }
  if (meteredGiven === 0) throw new UsageError("--price is required (or, for a metered agent, --price-per-unit, --unit and --max-units-per-call)", usage);
  if (meteredGiven < 3) throw new UsageError("a metered agent takes --price-per-unit, --unit and --max-units-per-call together", usage);
  const perUnit = usdcOption(values["price-per-unit"]!, "--price-per-unit", usage);
  if (perUnit === 0n) throw new UsageError("--price-per-unit must be more than 0", usage);
  const unit = values.unit!;
  if (!UNIT.test(unit)) throw new UsageError(`--unit must be 1 to 24 characters without a space at either end, got "${unit}"`, usage);
  const maxUnits = positiveU64Option(values["max-units-per-call"]!, "--max-units-per-call", usage);
  // The program refuses terms whose most per call is no u64 amount.
  if (perUnit * maxUnits > U64_MAX) throw new UsageError("--price-per-unit × --max-units-per-call is more USDC than a u64 holds", usage);
  return {
    chain: { kind: "Metered", pricePerUnitUsdc: perUnit, maxUnitsPerCall: maxUnits },
    listing: { model: "metered", price_per_unit_usdc: formatUsdc(perUnit), unit, max_units_per_call: maxUnits.toString() },
    mostPerCallUsdc: perUnit * maxUnits,
  };
}
