// How long a server's Retry-After asks a client to wait: the relayer's clients and the indexer
// (against a rate-limited RPC provider) read it by one rule.

/** The longest wait taken from a Retry-After: a server asking for more is better answered with the error than with a hung caller. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Milliseconds a Retry-After header asks for (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now_ms = Date.now()): number | null {
  if (header === null) return null;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now_ms;
  if (Number.isNaN(ms)) return null;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}
