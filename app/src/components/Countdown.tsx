import { useEffect, useState } from "react";
import { timeText } from "./time.js";

/** "2d 23h 59m 8s": the largest units first, down to seconds. */
export function durationText(totalSecs: number): string {
  const s = Math.max(0, Math.floor(totalSecs));
  const parts: string[] = [];
  const units: [number, string][] = [
    [86_400, "d"],
    [3_600, "h"],
    [60, "m"],
  ];
  let rest = s;
  for (const [size, unit] of units) {
    const n = Math.floor(rest / size);
    rest %= size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
  }
  parts.push(`${rest}s`);
  return parts.join(" ");
}

/**
 * Time left until `endsAtSecs` on the chain's clock, ticking every second. `chainNowSecs` is the
 * chain's time when read: localnet's clock may run ahead of this computer's, so the count keeps
 * the offset between the two.
 */
export function Countdown({ endsAtSecs, chainNowSecs, over }: { endsAtSecs: number; chainNowSecs: number; over: string }) {
  const [offsetSecs] = useState(() => chainNowSecs - Date.now() / 1000);
  const [now, setNow] = useState(() => Date.now() / 1000 + offsetSecs);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now() / 1000 + offsetSecs), 1000);
    return () => clearInterval(timer);
  }, [offsetSecs]);
  const left = endsAtSecs - now;
  if (left <= 0) return <span data-testid="countdown">{over}</span>;
  return (
    <span data-testid="countdown">
      <time dateTime={new Date(endsAtSecs * 1000).toISOString()}>{durationText(left)}</time> left (until {timeText(endsAtSecs * 1000)})
    </span>
  );
}
