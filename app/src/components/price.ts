import { callPriceUsdc, type Pricing } from "@agent-market/client";

import { usdcText } from "./money.js";

export function priceText(pricing: Pricing): string {
  switch (pricing.model) {
    case "pay_per_use":
      return `${usdcText(pricing.price_usdc)} per call`;
    case "subscription":
      return `${usdcText(pricing.period_price_usdc)} per ${Math.round(pricing.period_secs / 86400)} days`;
    case "hybrid":
      return `${usdcText(pricing.period_price_usdc)} per ${Math.round(pricing.period_secs / 86400)} days, ${pricing.included_calls} calls, then ${usdcText(pricing.overage_price_usdc)}`;
    case "metered":
      // A caller accepts the most a call may cost before it runs: the price says it beside the rate.
      return `${usdcText(pricing.price_per_unit_usdc)} per ${pricing.unit}, up to ${usdcText(callPriceUsdc(pricing))} a call`;
  }
}
