// USDC amounts: decimal strings on the wire ("12.500000"), bigint base units (6 decimals) for
// arithmetic, never floats, which cannot hold every amount exactly.

export const USDC_DECIMALS = 6;
const UNIT = 1_000_000n;
const U64_MAX = (1n << 64n) - 1n;
const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/;

/**
 * Base units of a decimal USDC amount: "12.5" → 12500000n. Accepts the API's six-place form and
 * shorter ones; throws on anything else (signs, exponents, more than six places, above u64).
 */
export function parseUsdc(text: string): bigint {
  const match = typeof text === "string" ? DECIMAL.exec(text) : null;
  if (!match) throw new TypeError(`not a USDC amount (digits, at most 6 decimal places): ${String(text)}`);
  const base_units = BigInt(match[1]!) * UNIT + BigInt((match[2] ?? "").padEnd(USDC_DECIMALS, "0"));
  if (base_units > U64_MAX) throw new RangeError(`${text} USDC is above the largest on-chain amount`);
  return base_units;
}

/** The API's form of base units: 12500000n → "12.500000". */
export function formatUsdc(base_units: bigint): string {
  if (typeof base_units !== "bigint" || base_units < 0n) throw new RangeError("a USDC amount is a bigint ≥ 0");
  return `${base_units / UNIT}.${(base_units % UNIT).toString().padStart(USDC_DECIMALS, "0")}`;
}
