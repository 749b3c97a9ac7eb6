// SOL amounts: lamports (bigint) inside, decimal strings with 9 places where people read them.

const LAMPORTS_PER_SOL = 1_000_000_000n;

export function formatSol(lamports: bigint): string {
  return `${lamports / LAMPORTS_PER_SOL}.${(lamports % LAMPORTS_PER_SOL).toString().padStart(9, "0")}`;
}

/** Lamports of "2", "2.5" or "0.000000001" (up to 9 decimals), or null if it is not such an amount. */
export function parseSol(text: string): bigint | null {
  const match = /^([0-9]{1,9})(?:\.([0-9]{1,9}))?$/.exec(text);
  return match ? BigInt(match[1]!) * LAMPORTS_PER_SOL + BigInt((match[2] ?? "").padEnd(9, "0")) : null;
}
