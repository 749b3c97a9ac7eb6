// Pricing as the API shows it, and its conversion from the agent account's Pricing enum. The
// program prices every call; the listing only repeats what the chain holds, and is refused
// when the two differ.
import { MAX_SUBSCRIPTION_PERIOD_SECS, type Pricing, formatUsdc, USDC_WIRE_PATTERN } from "@agent-market/program";

export type PricingWire =
  | { model: "pay_per_use"; price_usdc: string }
  | { model: "subscription"; period_price_usdc: string; period_secs: number }
  | {
      model: "hybrid";
      period_price_usdc: string;
      period_secs: number;
      included_calls: number;
      overage_price_usdc: string;
    };

export function pricingFromChain(pricing: Pricing): PricingWire {
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
  }
}

export function samePricing(a: PricingWire, b: PricingWire): boolean {
  const keys = (p: PricingWire) => Object.keys(p).sort();
  const ka = keys(a);
  return ka.join() === keys(b).join() && ka.every((k) => a[k as keyof PricingWire] === b[k as keyof PricingWire]);
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
  ],
} as const;
