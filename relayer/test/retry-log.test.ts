// A job that waits is logged at debug level only: nothing at info, one JSON line at debug.
import { strict as assert } from "node:assert";
import { Writable } from "node:stream";

import { createLogger } from "@agent-market/service";

import { retryLog } from "../src/jobs/retry-log.js";

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { stream, lines };
}

describe("retryLog", () => {
  it("writes nothing above debug level", () => {
    for (const level of ["info", "warn", "error"]) {
      const { stream, lines } = capture();
      retryLog(createLogger(level, stream))("finish-exec_1", "not landed yet", 200);
      assert.deepEqual(lines, [], level);
    }
  });

  it("writes the job, its reason and its delay as a debug line", () => {
    const { stream, lines } = capture();
    retryLog(createLogger("debug", stream))("finish-exec_1", "not landed yet", 200);
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual(
      { level: line.level, msg: line.msg, job: line.job, reason: line.reason, delay_ms: line.delay_ms },
      { level: 20, msg: "job waits, runs again", job: "finish-exec_1", reason: "not landed yet", delay_ms: 200 },
    );
  });
});
