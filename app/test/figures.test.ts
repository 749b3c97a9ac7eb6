// An agent's record reads one way on every screen: the same mark for a figure with no data,
// whether it is a success rate or a latency.
import { strict as assert } from "node:assert";

import { latencyText, NO_DATA, successText } from "../src/components/figures.js";

describe("an agent's figures as text", () => {
  it("marks a success rate and a latency with no data the same way", () => {
    assert.equal(NO_DATA, "—");
    assert.equal(successText(null), NO_DATA);
    assert.equal(latencyText(null), NO_DATA);
  });

  it("reads a success rate to one decimal and latency in whole seconds, under one as '< 1 s'", () => {
    assert.deepEqual([successText(1), successText(0.975), successText(0)], ["100.0%", "97.5%", "0.0%"]);
    assert.deepEqual([latencyText(0), latencyText(0.4), latencyText(2.6)], ["< 1 s", "< 1 s", "3 s"]);
  });
});
