// USDC as people read it: with its unit, and without zeros beyond the cents that say nothing
// ("0.25 USDC", "100.00 USDC", "0.0025 USDC"). The exact six-place amount stays in the title.

/** "0.250000" → "0.25"; "100.000000" → "100.00"; "0.002500" → "0.0025". */
export function trimUsdc(amount: string): string {
  const [whole, fraction = ""] = amount.split(".");
  const kept = fraction.replace(/0+$/, "").padEnd(2, "0");
  return `${whole}.${kept}`;
}

export function usdcText(amount: string): string {
  return `${trimUsdc(amount)} USDC`;
}

/** A chart's figure (a sum of amounts, an axis value) read the same way: 0.5 → "0.50". */
export function usdcFigure(value: number): string {
  return trimUsdc(value.toFixed(6));
}
