// When a webhook delivery's attempts go, counted from its event. Dense at first, since most
// receivers that fail are down for seconds (a deploy, a restart): one back within 10 s gets its
// events within 15 s. Sparse later, so a receiver down for a day still gets every event: the whole
// schedule is 99,305 s (about 27.6 h), as long as it has always been.
//
// Each attempt but the first and the last is moved by up to ±20 % of the gap before it, so that
// the deliveries that failed together (every event of an outage) do not come back together. The
// last attempt is not moved: the schedule's length stays what it says.

/** Delay before each attempt after the previous one, in seconds; the last entry's attempt is the last. */
export const RETRY_SCHEDULE_SECS = [0, 5, 10, 30, 60, 120, 300, 600, 1_800, 3_600, 7_200, 14_400, 28_800, 42_380] as const;

/** The share of an attempt's gap by which it may move, either way. */
export const JITTER_SHARE = 0.2;

/**
 * Seconds from the event to attempt number `attempt` (0 is the first), `random` in [0, 1) placing
 * it within its jitter. Never before the previous attempt's latest time, never past the last.
 */
export function attemptOffsetSecs(schedule: readonly number[], attempt: number, random: number): number {
  const gaps = schedule.slice(0, attempt + 1);
  const planned_secs = gaps.reduce((sum, secs) => sum + secs, 0);
  if (attempt === 0 || attempt >= schedule.length - 1) return planned_secs;
  const gap_secs = gaps[gaps.length - 1]!;
  return planned_secs + (random * 2 - 1) * JITTER_SHARE * gap_secs;
}
