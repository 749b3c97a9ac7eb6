import { strict as assert } from "node:assert";

import { Batcher, KeyedBatchers } from "../src/db/batcher.js";

/** A batch runner whose batches finish only when the test says so. */
function controlledRunner() {
  const batches: { items: number[]; finish: (error?: Error) => void }[] = [];
  const run = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ items, finish: (error) => (error ? reject(error) : resolve(items.map((item) => `answer ${item}`))) });
    });
  return { batches, run };
}

/** Lets the promise callbacks of a finished batch run, the next batch's start among them. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("Batcher", () => {
  it("runs a lone item at once, in a batch of its own", async () => {
    const { batches, run } = controlledRunner();
    const batcher = new Batcher(run, { max_batch: 10, max_in_flight: 1 });
    const answer = batcher.submit(1);
    assert.deepEqual(batches.map((b) => b.items), [[1]]);
    batches[0]!.finish();
    assert.equal(await answer, "answer 1");
  });

  it("gathers the items that arrive while the batches in flight run, up to max_batch", async () => {
    const { batches, run } = controlledRunner();
    const batcher = new Batcher(run, { max_batch: 3, max_in_flight: 2 });
    const answers = [1, 2, 3, 4, 5, 6, 7].map((item) => batcher.submit(item));
    assert.deepEqual(batches.map((b) => b.items), [[1], [2]], "two in flight, the rest wait");
    batches[0]!.finish();
    await turn();
    assert.deepEqual(batches.map((b) => b.items), [[1], [2], [3, 4, 5]]);
    batches[1]!.finish();
    await turn();
    assert.deepEqual(batches.map((b) => b.items), [[1], [2], [3, 4, 5], [6, 7]]);
    batches[2]!.finish();
    batches[3]!.finish();
    assert.deepEqual(await Promise.all(answers), [1, 2, 3, 4, 5, 6, 7].map((item) => `answer ${item}`));
  });

  it("rejects the callers of a failed batch only, and goes on with the next", async () => {
    const { batches, run } = controlledRunner();
    const batcher = new Batcher(run, { max_batch: 10, max_in_flight: 1 });
    const first = batcher.submit(1);
    const second = [2, 3].map((item) => batcher.submit(item));
    batches[0]!.finish();
    await first;
    await turn();
    batches[1]!.finish(new Error("statement failed"));
    for (const answer of second) await assert.rejects(answer, /statement failed/);
    await turn();
    const third = batcher.submit(4);
    assert.deepEqual(batches[2]!.items, [4]);
    batches[2]!.finish();
    assert.equal(await third, "answer 4");
  });
});

describe("KeyedBatchers", () => {
  it("batches each key on its own: one key's batch in flight holds back only that key's items", async () => {
    const { batches, run } = controlledRunner();
    const keyed = new KeyedBatchers(run, { max_batch: 8, max_in_flight: 1 });
    const first = keyed.submit("agent-a", 1);
    const waiting = [2, 3].map((item) => keyed.submit("agent-a", item));
    const other = keyed.submit("agent-b", 4);
    assert.deepEqual(batches.map((b) => b.items), [[1], [4]], "agent-b goes at once beside agent-a's batch");
    batches[0]!.finish();
    await turn();
    assert.deepEqual(batches.map((b) => b.items), [[1], [4], [2, 3]], "agent-a's waiting items go together next");
    batches[1]!.finish();
    batches[2]!.finish();
    assert.deepEqual(await Promise.all([first, ...waiting, other]), ["answer 1", "answer 2", "answer 3", "answer 4"]);
  });

  it("starts afresh for a key whose batches are all done", async () => {
    const { batches, run } = controlledRunner();
    const keyed = new KeyedBatchers(run, { max_batch: 8, max_in_flight: 1 });
    const first = keyed.submit("agent-a", 1);
    batches[0]!.finish();
    await first;
    await turn();
    const again = keyed.submit("agent-a", 2);
    assert.deepEqual(batches.map((b) => b.items), [[1], [2]], "a lone item after an idle spell goes at once");
    batches[1]!.finish();
    assert.equal(await again, "answer 2");
  });

  it("with gather_ms, waits after a batch of several until that long after it started; never after a batch of one", async () => {
    const { batches, run } = controlledRunner();
    const batcher = new Batcher(run, { max_batch: 10, max_in_flight: 1, gather_ms: 40 });
    const lone = batcher.submit(1);
    batches[0]!.finish();
    await lone;
    await turn();
    const second = batcher.submit(2);
    assert.deepEqual(batches.map((b) => b.items), [[1], [2]], "after a lone batch, the next goes at once");
    const together = [3, 4].map((item) => batcher.submit(item));
    batches[1]!.finish();
    await second;
    await turn();
    assert.deepEqual(batches[2]!.items, [3, 4]);
    const started_ms = Date.now();
    batches[2]!.finish();
    await Promise.all(together);
    await turn();
    const gathered = [5, 6, 7].map((item) => batcher.submit(item));
    await turn();
    assert.equal(batches.length, 3, "after a batch of two, the next waits");
    assert.equal(batcher.idle, false);
    while (batches.length === 3) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(Date.now() - started_ms >= 35, "until gather_ms after the batch of two started");
    assert.deepEqual(batches[3]!.items, [5, 6, 7], "with everything that arrived meanwhile");
    batches[3]!.finish();
    await Promise.all(gathered);
  });

  it("with gather_ms, sends a full batch at once", async () => {
    const { batches, run } = controlledRunner();
    const batcher = new Batcher(run, { max_batch: 2, max_in_flight: 1, gather_ms: 10_000 });
    const first = [1, 2, 3].map((item) => batcher.submit(item));
    batches[0]!.finish();
    await turn();
    assert.deepEqual(batches[1]!.items, [2, 3]);
    batches[1]!.finish();
    await Promise.all(first);
    await turn();
    const full = [4, 5].map((item) => batcher.submit(item));
    await turn();
    assert.deepEqual(batches.map((b) => b.items), [[1], [2, 3], [4, 5]], "full: no gathering");
    batches[2]!.finish();
    await Promise.all(full);
  });

  it("with gather_ms, does not wait when gather_if says gathering does not pay", async () => {
    const { batches, run } = controlledRunner();
    const batcher = new Batcher(run, { max_batch: 10, max_in_flight: 1, gather_ms: 10_000, gather_if: () => false });
    const first = [1, 2, 3].map((item) => batcher.submit(item));
    batches[0]!.finish();
    await turn();
    batches[1]!.finish();
    await Promise.all(first);
    await turn();
    const next = batcher.submit(4);
    assert.deepEqual(batches.map((b) => b.items), [[1], [2, 3], [4]], "after a batch of two, at once: too few in progress");
    batches[2]!.finish();
    await next;
  });
});
