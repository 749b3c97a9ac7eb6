import type { Pricing } from "@agent-market/client";

export function priceText(pricing: Pricing): string {
  switch (pricing.model) {
    case "pay_per_use":
      return `${pricing.price_usdc} USDC per call`;
    case "subscription":
      return `${pricing.period_price_usdc} USDC per ${Math.round(pricing.period_secs / 86400)} days`;
    case "hybrid":
      return `${pricing.period_price_usdc} USDC per ${Math.round(pricing.period_secs / 86400)} days, ${pricing.included_calls} calls, then ${pricing.overage_price_usdc} USDC`;
  }
}
