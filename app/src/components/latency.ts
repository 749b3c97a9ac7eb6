// Latency, one way everywhere: the indexer measures it from block times in whole seconds, so a
// call that settled within its second reads "< 1 s" rather than a precise-looking 0.
export function latencyText(seconds: number | null): string {
  if (seconds === null) return "–";
  return seconds < 1 ? "< 1 s" : `${Math.round(seconds)} s`;
}
