// The checks of "@agent-market/client/verify", shared by the settle and settle_batch paths.
import { parseUsdc } from "@agent-market/program/usdc";
import type { TokenBalance, VersionedTransactionResponse } from "@solana/web3.js";

export interface ReceiptCheck {
  name: string;
  ok: boolean;
  /** What was compared, or why it could not be. */
  detail: string;
}

export interface ReceiptVerification {
  /** Every check passed. */
  ok: boolean;
  checks: ReceiptCheck[];
}

export class Checks {
  readonly list: ReceiptCheck[] = [];

  add(name: string, ok: boolean, detail: string): boolean {
    this.list.push({ name, ok, detail });
    return ok;
  }

  /** Runs `check`; an exception fails it with its message rather than escaping. */
  try(name: string, check: () => [boolean, string]): boolean {
    try {
      const [ok, detail] = check();
      return this.add(name, ok, detail);
    } catch (error) {
      return this.add(name, false, error instanceof Error ? error.message : String(error));
    }
  }

  result(): ReceiptVerification {
    return { ok: this.list.every((check) => check.ok), checks: this.list };
  }
}

export function same(what: string, got: string, expected: string): [boolean, string] {
  return got === expected ? [true, `${what} ${got}`] : [false, `${what} ${got}, expected ${expected}`];
}

/** Base units a token account gained in the transaction (0 when it is not among the balances). */
export function tokenDelta(tx: VersionedTransactionResponse, accountIndex: number): bigint {
  const amount = (balances: TokenBalance[] | null | undefined) =>
    BigInt(balances?.find((b) => b.accountIndex === accountIndex)?.uiTokenAmount.amount ?? "0");
  return amount(tx.meta?.postTokenBalances) - amount(tx.meta?.preTokenBalances);
}

/** Base units of a charge amount, or null for one that is not an amount. */
export function units(text: string): bigint | null {
  try {
    return parseUsdc(text);
  } catch {
    return null;
  }
}

