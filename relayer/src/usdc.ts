// USDC amounts: u64 base units (6 decimals) inside, decimal strings with exactly 6 places on the
// wire ("12.500000"), never floats.

export const USDC_DECIMALS = 6;
const UNIT = 1_000_000n;
const U64_MAX = (1n << 64n) - 1n;

/** Wire pattern of an amount: digits, a point, six digits. */
export const USDC_AMOUNT_PATTERN = "^(0|[1-9][0-9]{0,13})\\.[0-9]{6}$";

export function formatUsdc(base_units: bigint): string {
  if (base_units < 0n) throw new RangeError("a USDC amount cannot be negative");
  return `${base_units / UNIT}.${(base_units % UNIT).toString().padStart(USDC_DECIMALS, "0")}`;
}

/** Base units of a wire amount, or null if it is not one (or above u64). */
export function parseUsdc(text: string): bigint | null {
  if (!new RegExp(USDC_AMOUNT_PATTERN).test(text)) return null;
  const [whole, fraction] = text.split(".") as [string, string];
  const base_units = BigInt(whole) * UNIT + BigInt(fraction);
  return base_units > U64_MAX ? null : base_units;
}
