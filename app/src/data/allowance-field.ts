// The allowance field's own checks, in words beside it: the browser's `pattern` popup ("Please
// match the requested format.") and the relayer's refusal naming `amount_usdc` both said it in
// other words, elsewhere.
import { AgentMarketError, parseUsdc, type ApiKey } from "@agent-market/client";
import type { NetworkName } from "@agent-market/program/network";

const USDC_AMOUNT = /^[0-9]+(\.[0-9]{1,6})?$/;

/**
 * What is wrong with the typed amount, or null. An empty field stands for the sum of the keys'
 * caps: refused here when `empty` (the wallet's keys, once read) has no such sum, else the
 * relayer's to judge.
 */
export function allowanceProblem(text: string, empty: EmptyAllowance | null): string | null {
  const trimmed = text.trim();
  if (trimmed === "") {
    if (empty?.keys === 0) return "Enter an amount: this wallet has no API key, so there are no spending caps for an empty field to add up.";
    if (empty !== null && empty.uncapped.length > 0) return `Enter an amount: an empty field adds up your API keys' spending caps, and “${empty.uncapped[0]}” has none.`;
    return null;
  }
  if (USDC_AMOUNT.test(trimmed)) return null;
  return "Enter an amount in USDC with digits only, such as 5 or 2.50 (at most 6 decimals).";
}

/** The typed amount in base units when it is one, else null. */
export function allowanceAmount(text: string): bigint | null {
  const trimmed = text.trim();
  return USDC_AMOUNT.test(trimmed) ? parseUsdc(trimmed) : null;
}

/**
 * The relayer's refusal of an empty field: it fills it with the sum of the wallet's key caps,
 * which a wallet without a key (or with a key without a cap) does not have.
 */
export function emptyAllowanceRefusal(error: unknown): string | null {
  if (!(error instanceof AgentMarketError) || error.code !== "validation_failed" || error.param !== "amount_usdc") return null;
  return "Enter an amount: left empty, the allowance is the sum of your API keys' spending caps, and you have no key yet (or one of your keys has no cap).";
}

/** What an empty field sets: the relayer adds up the spending caps of the wallet's usable keys. */
export interface EmptyAllowance {
  /** The wallet's usable keys on the network: active (neither revoked nor expired), on that network. */
  keys: number;
  /** The names of those without a spending cap, which leave the sum undefined. */
  uncapped: string[];
  /** The sum of their caps, in base units. */
  sumUsdc: bigint;
}

export function emptyAllowance(keys: readonly ApiKey[], network: NetworkName): EmptyAllowance {
  const usable = keys.filter((key) => key.status === "active" && key.network === network);
  return {
    keys: usable.length,
    uncapped: usable.filter((key) => key.spending_cap_usdc === null).map((key) => key.name),
    sumUsdc: usable.reduce((sum, key) => sum + (key.spending_cap_usdc === null ? 0n : parseUsdc(key.spending_cap_usdc)), 0n),
  };
}
