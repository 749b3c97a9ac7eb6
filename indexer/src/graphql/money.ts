// USDC figures: base units (u64, as decimal strings from numeric columns) written with 6
// decimal places, with whether every event behind the figure is finalized.
import { graphqlError } from "./errors.js";

export interface Money {
  usdc: string;
  finalized: boolean;
}

export function formatUsdc(baseUnits: string | bigint): string {
  const value = BigInt(baseUnits);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  return `${negative ? "-" : ""}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, "0")}`;
}

export function money(baseUnits: string | bigint, maxSlot: number, finalizedSlot: number): Money {
  return { usdc: formatUsdc(baseUnits), finalized: maxSlot <= finalizedSlot };
}

export const MONEY_TYPE_DEFS = /* GraphQL */ `
  "A USDC amount: a decimal string with 6 places, and whether every event behind it is finalized."
  type Money {
    usdc: String!
    finalized: Boolean!
  }
`;

/** Seconds since the epoch → RFC 3339, for the API's times. */
export function isoTime(unixSecs: number | string | null | undefined): string | null {
  if (unixSecs === null || unixSecs === undefined) return null;
  return new Date(Number(unixSecs) * 1000).toISOString();
}

/** RFC 3339 → seconds since the epoch. */
export function parseTime(value: string, argument: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw graphqlError("BAD_USER_INPUT", `${argument} is not an RFC 3339 time`, { argument });
  return Math.floor(ms / 1000);
}
