// The response cache: a repeated query is answered from memory while nothing changed, and never
// after a change: a commit by this process is visible to the very next query, one by another
// process once its notice arrives; past its age an answer is computed again; off at 0.
import { strict as assert } from "node:assert";

import type { Indexer } from "../src/indexer.js";
import type { RawTransaction } from "../src/ingest/decoder.js";
import { activity, decoderOf, quietIndexer, query, rawTransaction, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

/** The statements `indexer` sends to PostgreSQL while `work` runs. */
async function statementsDuring(indexer: Indexer, work: () => Promise<unknown>): Promise<number> {
  const real = indexer.pool.query.bind(indexer.pool);
  let count = 0;
  (indexer.pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
    count += 1;
    return (real as (...a: unknown[]) => unknown)(...args);
  };
  try {
    await work();
  } finally {
    indexer.pool.query = real;
  }
  return count;
}

const MARKET = `{ market { executions spent { usdc } } }`;

describe("response cache", function () {
  this.timeout(180_000);
  let env: IndexerEnv | undefined;
  const decodeTransaction = (raw: RawTransaction) => decoderOf(env)(raw);

  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  it("answers a repeated query from memory, and a commit of this process is visible to the next query", async () => {
    const indexer = await quietIndexer(env!, { response_cache_ms: 60_000 });
    try {
      const run = await activity(env!.market, { settled: 2, refunded: 0, open: 0 });
      const raws = await Promise.all(run.signatures.map((s) => rawTransaction(env!.market, s)));
      // The agent and the first execution, then the second one.
      const split = run.signatures.length - 2;
      await indexer.store.ingest(raws.slice(0, split).map(decodeTransaction), "confirmed");
      await waitFor("the feed listening", async () => indexer.feed.finalizedSlot() !== null);
      // The commit's own notice comes back from PostgreSQL a moment later and moves the feed again.
      const settled = async () => {
        const seen = indexer.feed.generation();
        await new Promise((resolve) => setTimeout(resolve, 200));
        return indexer.feed.generation() === seen;
      };
      await waitFor("the notices in", settled);
      const first = await query(indexer, MARKET);
      let again: any;
      assert.equal(await statementsDuring(indexer, async () => (again = await query(indexer, MARKET))), 0);
      assert.deepEqual(again, first);
      await indexer.store.ingest(raws.slice(split).map(decodeTransaction), "confirmed");
      const after = await query(indexer, MARKET);
      assert.equal(after.market.executions, first.market.executions + 1);
    } finally {
      await indexer.close();
    }
  });

  it("sees another process's commit once its notice arrives", async () => {
    const server = await quietIndexer(env!, { response_cache_ms: 60_000, schema: "indexer_cache_shared" });
    const writer = await quietIndexer(env!, { response_cache_ms: 60_000, schema: "indexer_cache_shared" });
    try {
      await waitFor("the feed listening", async () => server.feed.finalizedSlot() !== null);
      const before = await query(server, MARKET);
      const run = await activity(env!.market, { settled: 1, refunded: 0, open: 0 });
      const raws = await Promise.all(run.signatures.map((s) => rawTransaction(env!.market, s)));
      await writer.store.ingest(raws.map(decodeTransaction), "confirmed");
      await waitFor("the other process's commit", async () => (await query(server, MARKET)).market.executions === before.market.executions + 1, 2_000);
    } finally {
      await writer.close();
      await server.close();
    }
  });

  it("computes an answer again past its age, and every time when off", async () => {
    for (const [ms, expectRead] of [
      [50, true],
      [0, true],
    ] as const) {
      const indexer = await quietIndexer(env!, { response_cache_ms: ms });
      try {
        await waitFor("the feed listening", async () => indexer.feed.finalizedSlot() !== null);
        await query(indexer, MARKET);
        if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms + 20));
        assert.equal((await statementsDuring(indexer, () => query(indexer, MARKET))) > 0, expectRead, `cache ${ms} ms`);
      } finally {
        await indexer.close();
      }
    }
  });
});
