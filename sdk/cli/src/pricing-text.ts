// What one call of an agent costs, as the CLI and the MCP server print it. A metered agent's call
// costs at most its price per unit times its most units per call; it is charged the units it used.
import { callPriceUsdc, type Pricing } from "@agent-market/client";

/**
 * "0.250000 USDC per call", or a metered agent's "up to 0.100000 USDC, 0.001000 per 100 words";
 * a subscription's calls cost nothing within the period bought, a hybrid plan's past its quota
 * the overage price.
 */
export function callPriceText(pricing: Pricing): string {
  return pricing.model === "metered"
    ? `up to ${callPriceUsdc(pricing)} USDC, ${pricing.price_per_unit_usdc} per ${pricing.unit}`
    : `${callPriceUsdc(pricing)} USDC per call`;
}
