/**
 * A fixed length of time in words, its two largest units: "7 days", "1 day 6 hours", "90 seconds"
 * reads "1 minute 30 seconds". For a length that is stated (a cooldown's), not counted down.
 */
export function durationWords(totalSecs: number): string {
  const units: [number, string][] = [
    [86_400, "day"],
    [3_600, "hour"],
    [60, "minute"],
    [1, "second"],
  ];
  let rest = Math.max(0, Math.floor(totalSecs));
  const parts: string[] = [];
  for (const [size, unit] of units) {
    const n = Math.floor(rest / size);
    rest %= size;
    if (n > 0 && parts.length < 2) parts.push(`${n} ${unit}${n === 1 ? "" : "s"}`);
  }
  return parts.length === 0 ? "0 seconds" : parts.join(" ");
}
