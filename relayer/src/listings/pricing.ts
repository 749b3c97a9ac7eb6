// Pricing as the API shows it, and its conversion from the agent account's Pricing enum. The
// program prices every call; the listing only repeats what the chain holds, and is refused
// when the two differ. A metered listing also names its unit ("tokens", "pages"), which the chain
// does not hold: the listing hash the agent account records covers it.
import { MAX_SUBSCRIPTION_PERIOD_SECS, type Pricing, formatUsdc, parseWireUsdc, USDC_WIRE_PATTERN } from "@agent-market/program";

export type PricingWire =
  | { model: "pay_per_use"; price_usdc: string }
  | { model: "subscription"; period_price_usdc: string; period_secs: number }
  | {
      model: "hybrid";
      period_price_usdc: string;
      period_secs: number;
      included_calls: number;
      overage_price_usdc: string;
    }
  | {
      model: "metered";
      price_per_unit_usdc: string;
      /** What a unit is, shown to callers. */
      unit: string;
      /** u64 as a decimal string: the most units one call may be charged for. */
      max_units_per_call: string;
    };

/** Pricing as the agent account holds it: a metered one without its unit's name. */
export type ChainPricingWire =
  | Exclude<PricingWire, { model: "metered" }>
  | Omit<Extract<PricingWire, { model: "metered" }>, "unit">;

/** The most one call costs (null for a subscription, whose calls its period covers). */
export function maxCallPriceUsdc(pricing: PricingWire): bigint | null {
  switch (pricing.model) {
    case "pay_per_use":
      return parseWireUsdc(pricing.price_usdc);
    case "hybrid":
      return parseWireUsdc(pricing.overage_price_usdc);
    case "metered":
      return parseWireUsdc(pricing.price_per_unit_usdc) * BigInt(pricing.max_units_per_call);
    case "subscription":
      return null;
  }
}

export function pricingFromChain(pricing: Pricing): ChainPricingWire {
  switch (pricing.kind) {
    case "PayPerUse":
      return { model: "pay_per_use", price_usdc: formatUsdc(pricing.priceUsdc) };
    case "Subscription":
      return {
        model: "subscription",
        period_price_usdc: formatUsdc(pricing.periodPriceUsdc),
        period_secs: pricing.periodSecs,
      };
    case "Hybrid":
      return {
        model: "hybrid",
        period_price_usdc: formatUsdc(pricing.periodPriceUsdc),
        period_secs: pricing.periodSecs,
        included_calls: pricing.includedCalls,
        overage_price_usdc: formatUsdc(pricing.overagePriceUsdc),
      };
    case "Metered":
      return {
        model: "metered",
        price_per_unit_usdc: formatUsdc(pricing.pricePerUnitUsdc),
        max_units_per_call: pricing.maxUnitsPerCall.toString(),
      };
  }
}

/** Whether the listing's pricing is the chain's: every term the chain holds, the unit's name aside. */
export function samePricing(on_chain: ChainPricingWire, listed: PricingWire): boolean {
  const { unit: _unit, ...terms } = listed as PricingWire & { unit?: string };
  const a = on_chain as Record<string, unknown>;
  const b = terms as Record<string, unknown>;
  const keys = Object.keys(a).sort();
  return keys.join() === Object.keys(b).sort().join() && keys.every((k) => a[k] === b[k]);
}

const amount = { type: "string", pattern: USDC_WIRE_PATTERN } as const;
const count = { type: "integer", minimum: 1, maximum: 4294967295 } as const;
/** The program refuses a longer period (SubscriptionPeriodTooLong). */
const periodSecs = { type: "integer", minimum: 1, maximum: MAX_SUBSCRIPTION_PERIOD_SECS } as const;

/** JSON Schema of PricingWire, for request validation and the OpenAPI document. */
export const PRICING_SCHEMA = {
  oneOf: [
    {
      type: "object",
      additionalProperties: false,
      required: ["model", "price_usdc"],
      properties: { model: { const: "pay_per_use" }, price_usdc: amount },
    },
    {
      type: "object",
      additionalProperties: false,
      required: ["model", "period_price_usdc", "period_secs"],
      properties: { model: { const: "subscription" }, period_price_usdc: amount, period_secs: periodSecs },
    },
    {
      type: "object",
      additionalProperties: false,
      required: ["model", "period_price_usdc", "period_secs", "included_calls", "overage_price_usdc"],
      properties: {
        model: { const: "hybrid" },
        period_price_usdc: amount,
        period_secs: periodSecs,
        included_calls: count,
        overage_price_usdc: amount,
      },
    },
    {
      type: "object",
      additionalProperties: false,
      required: ["model", "price_per_unit_usdc", "unit", "max_units_per_call"],
      properties: {
        model: { const: "metered" },
        price_per_unit_usdc: amount,
        unit: { type: "string", minLength: 1, maxLength: 24, pattern: "^\\S(.*\\S)?$" },
        max_units_per_call: { type: "string", pattern: "^[1-9][0-9]{0,19}$" },
      },
    },
  ],
} as const;
