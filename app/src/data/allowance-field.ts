// The allowance field's own checks, in words beside it: the browser's `pattern` popup ("Please
// match the requested format.") and the relayer's refusal naming `amount_usdc` both said it in
// other words, elsewhere.
import { AgentMarketError, parseUsdc } from "@agent-market/client";

const USDC_AMOUNT = /^[0-9]+(\.[0-9]{1,6})?$/;

/** What is wrong with the typed amount, or null (an empty field is the relayer's to judge). */
export function allowanceProblem(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === "" || USDC_AMOUNT.test(trimmed)) return null;
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
