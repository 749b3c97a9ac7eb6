// What an execution was charged, as the CLI and the MCP server print it: a metered call is charged
// the units its creator signed, and what its escrow held beyond that went back to the payer.
import type { Execution } from "@agent-market/client";

/**
 * "0.250000 USDC", or a metered call's "0.003000 USDC for 3 units at 0.001000 USDC, 0.097000 of
 * the 0.100000 held returned".
 */
export function chargeText(charge: Execution["charge"]): string {
  const charged = `${charge.charged_usdc} USDC`;
  if (charge.price_per_unit_usdc === null || charge.units === null) return charged;
  return `${charged} for ${charge.units} units at ${charge.price_per_unit_usdc} USDC, ${charge.returned_usdc} of the ${charge.held_usdc} held returned`;
}
