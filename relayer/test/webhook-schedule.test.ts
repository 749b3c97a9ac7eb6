// The webhook retry schedule: as long as it always was, dense at first, each attempt jittered
// within its share of the gap, in order whatever the draw, the last one where the schedule ends.
import { strict as assert } from "node:assert";

import { attemptOffsetSecs, JITTER_SHARE, RETRY_SCHEDULE_SECS } from "../src/webhooks/retry-schedule.js";

const at = (attempt: number, random: number) => attemptOffsetSecs(RETRY_SCHEDULE_SECS, attempt, random);
const LAST = RETRY_SCHEDULE_SECS.length - 1;

describe("webhook retry schedule", () => {
  it("keeps the schedule's length (99,305 s) and puts the last attempt exactly there", () => {
    assert.equal(RETRY_SCHEDULE_SECS.reduce((sum: number, secs) => sum + secs, 0), 99_305);
    for (const random of [0, 0.5, 0.999999]) assert.equal(at(LAST, random), 99_305);
    for (const random of [0, 0.999999]) assert.equal(at(0, random), 0, "the first attempt goes at once");
  });

  it("gets an event to a receiver down for 10 s within 17 s, and tries 4 times in the first minute", () => {
    const latest = (attempt: number) => at(attempt, 0.999999);
    const firstAfter = RETRY_SCHEDULE_SECS.map((_, attempt) => latest(attempt)).find((secs) => secs >= 10)!;
    assert.ok(firstAfter <= 17, String(firstAfter));
    assert.equal(RETRY_SCHEDULE_SECS.filter((_, attempt) => latest(attempt) <= 60).length, 4);
  });

  it("moves each attempt in between by at most 20% of its gap, either way, and never before the one before it", () => {
    let planned = 0;
    for (let attempt = 1; attempt < LAST; attempt += 1) {
      planned += RETRY_SCHEDULE_SECS[attempt]!;
      const gap = RETRY_SCHEDULE_SECS[attempt]!;
      assert.equal(at(attempt, 0), planned - JITTER_SHARE * gap);
      assert.ok(Math.abs(at(attempt, 0.999999) - (planned + JITTER_SHARE * gap)) < gap * 1e-5);
      assert.equal(at(attempt, 0.5), planned);
      assert.ok(at(attempt, 0) > at(attempt - 1, 0.999999), `attempt ${attempt} stays after attempt ${attempt - 1}`);
    }
    assert.ok(at(LAST, 0) > at(LAST - 1, 0.999999));
  });
});
