// USDC figures: base units (u64, as decimal strings from numeric columns) written with 6
// decimal places, with whether every event behind the figure is finalized.
import { formatSignedUsdc, formatUsdc } from "@agent-market/program";

import type { Finality } from "./answer-scope.js";
import { graphqlError } from "./errors.js";

export interface Money {
  usdc: string;
  finalized: boolean;
}

/** A sum of amounts, never below zero. */
export function money(baseUnits: string | bigint, maxSlot: number, finality: Finality): Money {
  return { usdc: formatUsdc(BigInt(baseUnits)), finalized: finality.isFinal(maxSlot) };
}

/**
 * A difference of sums, which may fall below zero: a fee shard's unswept fees are its indexed
 * fees less its sweeps, and a sweep takes the shard's whole balance, USDC sent straight to its
 * token account included.
 */
export function signedMoney(baseUnits: bigint, maxSlot: number, finality: Finality): Money {
  return { usdc: formatSignedUsdc(baseUnits), finalized: finality.isFinal(maxSlot) };
}

export const MONEY_TYPE_DEFS = /* GraphQL */ `
  "A USDC amount: a decimal string with 6 places, and whether every event behind it is finalized."
  type Money {
    usdc: String!
    finalized: Boolean!
  }
`;

/** Seconds since the epoch → RFC 3339, for the API's times. */
export function isoSecs(unixSecs: number | string): string {
  return new Date(Number(unixSecs) * 1000).toISOString();
}

/** A time that may be unknown (a column left null), as isoSecs. */
export function isoTime(unixSecs: number | string | null | undefined): string | null {
  return unixSecs === null || unixSecs === undefined ? null : isoSecs(unixSecs);
}

/** RFC 3339 → seconds since the epoch. */
export function parseTime(value: string, argument: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw graphqlError("BAD_USER_INPUT", `${argument} is not an RFC 3339 time`, { argument });
  return Math.floor(ms / 1000);
}
