// What one call costs, as a listing shows it: the amount to send as `maxPriceUsdc` so that a
// caller is never charged more than it was shown.
import { formatUsdc, parseWireUsdc } from "@agent-market/program/usdc";

import type { Pricing } from "./types.js";

/**
 * The most one call of an agent with this pricing costs: the pay-per-use price, a hybrid plan's
 * overage price (calls within the included quota cost nothing), a metered call's price for its
 * most units (it is charged only the units it used), and zero for a subscription (its calls are
 * covered by the period bought).
 */
export function callPriceUsdc(pricing: Pricing): string {
  switch (pricing.model) {
    case "pay_per_use":
      return pricing.price_usdc;
    case "hybrid":
      return pricing.overage_price_usdc;
    case "subscription":
      return "0.000000";
    case "metered":
      return formatUsdc(parseWireUsdc(pricing.price_per_unit_usdc) * BigInt(pricing.max_units_per_call));
  }
}
