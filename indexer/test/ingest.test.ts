// One ingestion path for every source: duplicates and any order store each event once, and the
// views equal what the chain says.
import { strict as assert } from "node:assert";

import { formatExecutionId, formatUsdc } from "@agent-market/program";

import { backfill } from "../src/ingest/backfill.js";
import type { Indexer } from "../src/indexer.js";
import { reconcile } from "../src/reconcile.js";
import type { RawTransaction } from "../src/ingest/decoder.js";
import { activity, decoderOf, quietIndexer, query, rawTransaction, startEnv, stopEnv, type Activity, type IndexerEnv } from "./support.js";

const WEBHOOK_AUTH = "test-webhook-authorization-value";

async function count(indexer: Indexer, table: string): Promise<number> {
  return Number((await indexer.pool.query(`SELECT count(*) AS n FROM ${indexer.config.schema}.${table}`)).rows[0].n);
}

describe("ingestion", function () {
  this.timeout(180_000);
  let env: IndexerEnv | undefined;
  const decodeTransaction = (raw: RawTransaction) => decoderOf(env)(raw);
  let run: Activity;

  before(async () => {
    env = await startEnv();
    run = await activity(env.market, { settled: 3, refunded: 2, open: 1 });
  });
  after(() => stopEnv(env));

  it("stores each event once whatever the source, the order or the repetition", async () => {
    const indexer = await quietIndexer(env!);
    try {
      const raws = await Promise.all(run.signatures.map((signature) => rawTransaction(env!.market, signature)));
      const decoded = raws.map(decodeTransaction);
      // Newest first and twice over, through the store (the live source's path)…
      await indexer.store.ingest([...decoded].reverse(), "confirmed");
      await indexer.store.ingest(decoded.slice(2, 5), "confirmed");
      // …through the webhook, shuffled, twice…
      const shuffled = [raws[3], raws[0], raws[5], raws[1]];
      for (let i = 0; i < 2; i++) {
        const response = await indexer.yoga.fetch("http://indexer.test/webhooks/helius", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: WEBHOOK_AUTH },
          body: JSON.stringify(shuffled),
        });
        assert.equal(response.status, 200);
      }
      // …and through the backfill, twice.
      await backfill(indexer.rpc, indexer.store);
      await backfill(indexer.rpc, indexer.store);

      const expectedEvents = decoded.reduce((sum, tx) => sum + tx.events.length, 0);
      assert.equal(await count(indexer, "events"), expectedEvents);
      assert.equal(await count(indexer, "executions"), 6);
      const data = await query(
        indexer,
        `query($agent: String!) {
          agent(address: $agent) {
            creator
            collateral { usdc finalized }
            stats(window: H24) { executions settled open refunded { creatorError againstCreator total } successRate spent { usdc } earned { usdc } fees { usdc }
              latencySlots { p50 p95 samples } }
          }
        }`,
        { agent: run.agent.address.toBase58() },
      );
      const stats = data.agent.stats;
      assert.equal(data.agent.creator, run.agent.creator.wallet.publicKey.toBase58());
      assert.equal(data.agent.collateral.usdc, "100.000000");
      assert.deepEqual(
        { executions: stats.executions, settled: stats.settled, open: stats.open, refunded: stats.refunded },
        { executions: 6, settled: 3, open: 1, refunded: { creatorError: 2, againstCreator: 2, total: 2 } },
      );
      assert.equal(stats.successRate, 3 / 5);
      assert.equal(stats.latencySlots.samples, 3);

      // The figures equal the chain's events.
      let spent = 0n;
      let earned = 0n;
      let fees = 0n;
      for (const escrow of run.settled) {
        const settledEvent = decoded.flatMap((tx) => tx.events).find((event) => event.name === "EscrowSettledToLog" && event.executionId === formatExecutionId(escrow.executionId))!;
        spent += BigInt(String(settledEvent.data.chargedUsdc));
        earned += BigInt(String(settledEvent.data.creatorShareUsdc));
        fees += BigInt(String(settledEvent.data.feeUsdc));
      }
      assert.deepEqual([stats.spent.usdc, stats.earned.usdc, stats.fees.usdc], [formatUsdc(spent), formatUsdc(earned), formatUsdc(fees)]);

      const result = await reconcile(indexer.rpc, indexer.pool, indexer.config.schema, indexer.config.program_id);
      assert.deepEqual(result.differences, []);
      assert.equal(result.executions, 6);
    } finally {
      await indexer.close();
    }
  });

  it("builds the same execution when its settle arrives before its open, and moves it to its creator once the agent is known", async () => {
    const indexer = await quietIndexer(env!, { schema: "indexer_out_of_order" });
    try {
      const [register, open, settle] = await Promise.all([run.signatures[0]!, run.signatures[1]!, run.signatures[2]!].map((s) => rawTransaction(env!.market, s)));
      await indexer.store.ingest([decodeTransaction(settle!)], "confirmed");
      const id = formatExecutionId(run.settled[0]!.executionId);
      let data = await query(indexer, `query($id: ID!) { execution(id: $id) { state openTransaction { signature } creator } }`, { id });
      assert.deepEqual(data.execution, { state: "SETTLED", openTransaction: null, creator: null });
      await indexer.store.ingest([decodeTransaction(open!)], "confirmed");
      await indexer.store.ingest([decodeTransaction(register!)], "confirmed");
      data = await query(
        indexer,
        `query($id: ID!, $creator: String!) {
          execution(id: $id) { state latencySlots openTransaction { signature } creator }
          usage(dimension: CREATOR, subject: $creator) { totals(window: D30) { executions settled earned { usdc } } }
        }`,
        { id, creator: run.agent.creator.wallet.publicKey.toBase58() },
      );
      assert.equal(data.execution.state, "SETTLED");
      assert.equal(data.execution.openTransaction.signature, run.settled[0]!.signature);
      assert.equal(data.execution.creator, run.agent.creator.wallet.publicKey.toBase58());
      assert.equal(data.usage.totals.executions, 1);
      assert.equal(data.usage.totals.settled, 1);
      const market = await query(indexer, `{ market { executions spent { usdc } } }`);
      assert.equal(market.market.executions, 1, "the market rollup counts it once, not once per arrival");
    } finally {
      await indexer.close();
    }
  });

  it("serializes the writes of one schema across processes: a Helius delivery to a second server waits for the writer's transaction", async () => {
    // Two indexers over one database stand for two processes: the network's writer and a server
    // that takes webhook deliveries. Each rebuilds an execution's row from its events, so the
    // second must not write while the first's transaction is open.
    const schema = "indexer_two_writers";
    const writer = await quietIndexer(env!, { schema });
    const server = await quietIndexer(env!, { schema });
    const holder = await writer.pool.connect();
    try {
      const [open, settle] = await Promise.all([run.signatures[1]!, run.signatures[2]!].map((s) => rawTransaction(env!.market, s)));
      await holder.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtext('indexer-write:${schema}'))`);
      await holder.query(`SELECT 1`); // the writer's transaction, still open
      let delivered = false;
      const delivery = Promise.resolve(
        server.yoga.fetch("http://indexer.test/webhooks/helius", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: WEBHOOK_AUTH },
          body: JSON.stringify([settle]),
        }),
      ).then((response) => {
        delivered = true;
        return response;
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(delivered, false, "the delivery waits while the writer's transaction is open");
      const writing = writer.store.ingest([decodeTransaction(open!)], "confirmed");
      await holder.query("COMMIT");
      assert.equal((await delivery).status, 200);
      await writing;
      const id = formatExecutionId(run.settled[0]!.executionId);
      const data = await query(server, `query($id: ID!) { execution(id: $id) { state openTransaction { signature } } }`, { id });
      assert.deepEqual(data.execution, { state: "SETTLED", openTransaction: { signature: run.settled[0]!.signature } });
    } finally {
      holder.release();
      await server.close();
      await writer.close();
    }
  });
});
