// USDC amounts, one rule set for every package: bigint base units for arithmetic (6 decimals, at
// most u64 on chain), decimal strings for the wire and for people, never floats, which cannot hold
// every amount exactly. Imports nothing, so a browser bundle can take it alone
// ("@agent-market/program/usdc").
//
//   formatUsdc(bigint ≥ 0)      → "12.500000"   RangeError for a negative or a non-bigint
//   formatSignedUsdc(bigint)    → "-1.500000"   the same, with a sign: only for differences
//   parseWireUsdc("12.500000")  → 12500000n     exactly USDC_WIRE_PATTERN, at most u64
//   parseUsdc("12.5")           → 12500000n     a person's input: 0 to 6 places, at most u64
//
// Both parsers throw TypeError for text that is not an amount of their form (signs, exponents,
// spaces, leading zeros, "1.", ".5", more than 6 places) and RangeError above u64.

export const USDC_DECIMALS = 6;
const BASE_UNITS_PER_USDC = 1_000_000n;
/** The largest amount a token account or instruction can hold: u64. */
const MAX_BASE_UNITS = (1n << 64n) - 1n;

/**
 * An amount on the wire: digits without leading zeros, a point, exactly six digits. Fourteen whole
 * digits at most, the width of u64's; the parser still refuses the values between u64 and that.
 * A string, for JSON Schema's `pattern`.
 */
export const USDC_WIRE_PATTERN = "^(0|[1-9][0-9]{0,13})\\.([0-9]{6})$";
const WIRE = new RegExp(USDC_WIRE_PATTERN);
const TYPED = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/;

/**
 * The wire form of base units: 12500000n → "12.500000". No upper bound, since sums of amounts
 * may pass u64; at most u64, the result matches USDC_WIRE_PATTERN.
 */
export function formatUsdc(baseUnits: bigint): string {
  if (typeof baseUnits !== "bigint" || baseUnits < 0n) throw new RangeError("a USDC amount is a bigint ≥ 0");
  return `${baseUnits / BASE_UNITS_PER_USDC}.${(baseUnits % BASE_UNITS_PER_USDC).toString().padStart(USDC_DECIMALS, "0")}`;
}

/** A figure that may fall below zero, a difference of sums: -1500000n → "-1.500000". */
export function formatSignedUsdc(baseUnits: bigint): string {
  return baseUnits < 0n ? `-${formatUsdc(-baseUnits)}` : formatUsdc(baseUnits);
}

/** Base units of `text` if `form` (whole digits, then up to six places) matches it. */
function parse(text: string, form: RegExp, expected: string): bigint {
  const match = typeof text === "string" ? form.exec(text) : null;
  if (!match) throw new TypeError(`not a USDC amount (${expected}): ${String(text)}`);
  const baseUnits = BigInt(match[1]!) * BASE_UNITS_PER_USDC + BigInt((match[2] ?? "").padEnd(USDC_DECIMALS, "0"));
  if (baseUnits > MAX_BASE_UNITS) throw new RangeError(`${text} USDC is above the largest on-chain amount`);
  return baseUnits;
}

/** Base units of a wire amount, which has exactly six places: "12.500000" → 12500000n. */
export function parseWireUsdc(text: string): bigint {
  return parse(text, WIRE, "digits, a point and exactly 6 decimal places");
}

/** Base units of an amount a person typed, with up to six places or none: "12.5" → 12500000n. */
export function parseUsdc(text: string): bigint {
  return parse(text, TYPED, "digits, at most 6 decimal places");
}
