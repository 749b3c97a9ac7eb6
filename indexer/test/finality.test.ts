// Finality: events are promoted as the chain finalizes them, and a transaction dropped before
// finalization (localnet_dropTransaction) leaves no trace in any view.
import { strict as assert } from "node:assert";

import { formatExecutionId } from "@agent-market/program";

import { decodeTransaction } from "../src/ingest/decoder.js";
import { settleFinality } from "../src/ingest/finality.js";
import { activity, quietIndexer, query, rawTransaction, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

describe("finality", function () {
  this.timeout(120_000);
  let env: IndexerEnv | undefined;

  // Slow slots leave time to act between confirmed and finalized (32 slots).
  before(async () => {
    env = await startEnv({ slotMs: 400 });
  });
  after(() => stopEnv(env));

  it("removes a transaction dropped before finalization and corrects every view, then finalizes the rest", async () => {
    const market = env!.market;
    const run = await activity(market, { settled: 1, refunded: 0, open: 0 });
    const indexer = await quietIndexer(env!);
    try {
      // A second execution whose settle is dropped by the chain.
      const escrow = await market.openEscrow(run.agent, run.payer);
      const settle = await market.settle(escrow, run.agent);
      const raws = await Promise.all([...run.signatures, escrow.signature, settle].map((s) => rawTransaction(market, s)));
      await indexer.store.ingest(raws.map(decodeTransaction), "confirmed");
      const id = formatExecutionId(escrow.executionId);
      const text = `query($id: ID!, $agent: String!) {
        execution(id: $id) { state commitment closeTransaction { signature } }
        agent(address: $agent) { stats(window: H24) { executions settled open spent { usdc } latencySlots { samples } } }
        market { executions spent { usdc } fees { usdc } feeShards { index fees { usdc } } }
      }`;
      const vars = { id, agent: run.agent.address.toBase58() };
      const before = await query(indexer, text, vars);
      assert.equal(before.execution.state, "SETTLED");
      assert.equal(before.execution.commitment, "CONFIRMED");
      assert.deepEqual(before.agent.stats, { executions: 2, settled: 2, open: 0, spent: { usdc: "0.500000" }, latencySlots: { samples: 2 } });

      await market.localnet.call("localnet_dropTransaction", [settle]);
      // The settle is found gone once the chain finalizes past its slot.
      await waitFor("the drop", async () => {
        await settleFinality(indexer.rpc, indexer.store);
        return (await query(indexer, text, vars)).execution.state === "OPEN";
      }, 30_000);
      const after = await query(indexer, text, vars);
      assert.equal(after.execution.state, "OPEN");
      assert.equal(after.execution.closeTransaction, null);
      assert.deepEqual(after.agent.stats, { executions: 2, settled: 1, open: 1, spent: { usdc: "0.250000" }, latencySlots: { samples: 1 } });
      assert.equal(after.market.spent.usdc, "0.250000");
      assert.equal(after.market.executions, 2);

      // The rest is promoted, and the watermark passes it.
      await waitFor("promotion", async () => {
        await settleFinality(indexer.rpc, indexer.store);
        return (await query(indexer, text, vars)).execution.commitment === "FINALIZED";
      }, 30_000);
      const status = await query(indexer, `{ indexer { finalizedSlot latestSlot } }`);
      assert.ok(status.indexer.finalizedSlot >= status.indexer.latestSlot);
      const remaining = await indexer.pool.query(`SELECT count(*) AS n FROM ${indexer.config.schema}.transactions WHERE signature = $1`, [settle]);
      assert.equal(Number(remaining.rows[0].n), 0);
    } finally {
      await indexer.close();
    }
  });
});
