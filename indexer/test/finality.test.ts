// Finality: events are promoted as the chain finalizes them, and a transaction dropped before
// finalization (localnet_dropTransaction) leaves no trace in any view, but only once it is
// provably gone: a node that merely has not seen it yet deletes nothing.
import { strict as assert } from "node:assert";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { formatExecutionId } from "@agent-market/program";

import { settleFinality } from "../src/ingest/finality.js";
import { SolanaRpc } from "../src/ingest/rpc.js";
import type { RawTransaction } from "../src/ingest/decoder.js";
import { activity, decoderOf, quietIndexer, query, rawTransaction, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

describe("finality", function () {
  this.timeout(120_000);
  let env: IndexerEnv | undefined;
  const decodeTransaction = (raw: RawTransaction) => decoderOf(env)(raw);

  // Slots slow enough to act between confirmed and finalized (32 slots, 6.4 s), fast enough that
  // a blockhash expires (150 blocks) within the test.
  before(async () => {
    env = await startEnv({ slotMs: 200 });
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
      // Gone from the status read at once, but its blockhash could still land it: kept.
      const first = await waitFor("a pass past the settle's slot", async () => {
        const result = await settleFinality(indexer.rpc, indexer.store);
        return result.pending > 0 ? result : null;
      }, 30_000);
      assert.equal(first.dropped, 0);
      assert.equal((await query(indexer, text, vars)).execution.state, "SETTLED");
      // The settle is found gone once its blockhash has expired and a finalized read misses it.
      await waitFor("the drop", async () => {
        await settleFinality(indexer.rpc, indexer.store);
        return (await query(indexer, text, vars)).execution.state === "OPEN";
      }, 60_000);
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

  it("keeps what a lagging node answers null for: nothing is deleted while the configured RPC still has it", async () => {
    const market = env!.market;
    const run = await activity(market, { settled: 1, refunded: 0, open: 0 });
    const indexer = await quietIndexer(env!);
    // A node behind a load balancer that has not seen these transactions: null for every status.
    const lagging = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", async () => {
        const calls = JSON.parse(body) as { id: number; method: string; params: unknown[] }[];
        const answers = await Promise.all(
          calls.map(async (call) =>
            call.method === "getSignatureStatuses"
              ? { jsonrpc: "2.0", id: call.id, result: { context: { slot: 0 }, value: (call.params[0] as string[]).map(() => null) } }
              : { jsonrpc: "2.0", id: call.id, result: await market.localnet.call(call.method, call.params) },
          ),
        );
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify(answers));
      });
    });
    await new Promise<void>((resolve) => lagging.listen(0, "127.0.0.1", resolve));
    try {
      const raws = await Promise.all(run.signatures.map((s) => rawTransaction(market, s)));
      await indexer.store.ingest(raws.map(decodeTransaction), "confirmed");
      const rpc = new SolanaRpc(`http://127.0.0.1:${(lagging.address() as AddressInfo).port}`);
      const text = `query($agent: String!) { agent(address: $agent) { stats(window: H24) { executions settled } } }`;
      const vars = { agent: run.agent.address.toBase58() };
      // Well past finalization and past every blockhash's expiry, the lagging node still says null.
      await waitFor("the blockhashes to expire", async () => {
        const result = await settleFinality(rpc, indexer.store);
        const expired = await indexer.rpc.areBlockhashesValid([raws[raws.length - 1]!.transaction.message.recentBlockhash!]);
        return expired[0] === false ? result : null;
      }, 60_000);
      const result = await settleFinality(rpc, indexer.store);
      assert.equal(result.dropped, 0);
      assert.ok(result.pending > 0);
      assert.deepEqual((await query(indexer, text, vars)).agent.stats, { executions: 1, settled: 1 });
      const stored = await indexer.pool.query(`SELECT count(*) AS n FROM ${indexer.config.schema}.transactions WHERE signature = ANY($1)`, [run.signatures]);
      assert.equal(Number(stored.rows[0].n), run.signatures.length);
    } finally {
      await new Promise<void>((resolve) => lagging.close(() => resolve()));
      await indexer.close();
    }
  });
});
