// The bounded latency histogram kept per bucket: counts per bin, bins bounded by these upper
// edges (slots or seconds), the last bin open-ended. Percentiles are read as the upper edge of
// the bin they fall in: exact below 8, within 25 % above.
export const LATENCY_EDGES: readonly number[] = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448,
  512, 640, 768, 896, 1024, 1280, 1536, 2048, 3072, 4096,
];
export const HISTOGRAM_BINS = LATENCY_EDGES.length + 1;

export function emptyHistogram(): number[] {
  return new Array<number>(HISTOGRAM_BINS).fill(0);
}

export function binOf(value: number): number {
  const index = LATENCY_EDGES.findIndex((edge) => value <= edge);
  return index === -1 ? LATENCY_EDGES.length : index;
}

/** The value at quantile `q` (0–1); null for an empty histogram. */
export function percentile(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let bin = 0; bin < histogram.length; bin++) {
    seen += histogram[bin]!;
    if (seen >= rank) return bin < LATENCY_EDGES.length ? LATENCY_EDGES[bin]! : Infinity;
  }
  return null;
}

export function addHistograms(into: number[], from: readonly (number | string | null)[]): number[] {
  for (let bin = 0; bin < into.length; bin++) into[bin]! += Number(from[bin] ?? 0);
  return into;
}
