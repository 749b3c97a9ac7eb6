// An agent's record as text, one way everywhere: the tables, the cards and the marketplace list
// say "no data" with the same mark, and latency and success read the same on every screen.

/** A figure with nothing to measure yet (no executions in the window): one mark for all of them. */
export const NO_DATA = "—";

/**
 * Latency: the indexer measures it from block times in whole seconds, so a call that settled
 * within its second reads "< 1 s" rather than a precise-looking 0.
 */
export function latencyText(seconds: number | null): string {
  if (seconds === null) return NO_DATA;
  return seconds < 1 ? "< 1 s" : `${Math.round(seconds)} s`;
}

/** A success rate (0 to 1) as a percentage to one decimal: "97.5%". */
export function successText(rate: number | null): string {
  return rate === null ? NO_DATA : `${(rate * 100).toFixed(1)}%`;
}
