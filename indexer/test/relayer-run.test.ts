// A relayer run, indexed live: every execution the relayer ran appears once, in the state and
// with the amounts the relayer answered (which it read from the chain), attributed to the payer's
// API key id, and the indexer reconciles with the chain with 0 differences.
import { strict as assert } from "node:assert";

import { dropDatabase, ensureDatabase, silentLogger } from "@agent-market/service";
import { TestMarket } from "@agent-market/tests/fixtures";
import { execute, listAgent, newPayer, type ListedAgent } from "@agent-market/tests/marketplace";
import { startRelayer, type RunningRelayer } from "@agent-market/tests/relayer";

import { createIndexer, type Indexer } from "../src/indexer.js";
import { parseConfig } from "../src/config.js";
import { reconcile } from "../src/reconcile.js";
import { databaseUrl, query, waitFor } from "./support.js";

interface RelayerExecution {
  id: string;
  status: string;
  charge?: { amount_usdc: string; creator_share_usdc: string; fee_usdc: string } | null;
}

describe("a relayer run, indexed", function () {
  this.timeout(240_000);
  let market: TestMarket | undefined;
  let relayer: RunningRelayer | undefined;
  let indexer: Indexer | undefined;
  const agents: ListedAgent[] = [];
  const url = databaseUrl();

  after(async () => {
    await indexer?.close();
    await Promise.all(agents.map((agent) => agent.server.close()));
    await relayer?.close();
    await market?.stop();
    await dropDatabase(url).catch(() => {});
  });

  it("shows every execution once, with the chain's figures, per agent and per API key", async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    await ensureDatabase(url);
    indexer = await createIndexer(
      parseConfig({
        INDEXER_NETWORK: "localnet",
        INDEXER_DATABASE_URL: url,
        INDEXER_RPC_URL: market.localnet.rpcUrl,
        INDEXER_WEBSOCKET_URL: market.localnet.websocketUrl,
        INDEXER_GAP_CHECK_INTERVAL_MS: "1000",
        INDEXER_FINALITY_INTERVAL_MS: "200",
      }),
      { logger: silentLogger },
    );
    const good = await listAgent(market, relayer);
    const bad = await listAgent(market, relayer);
    agents.push(good, bad);
    // Listed while well (the relayer probes at listing), failing since.
    bad.server.behaviour = "invalid_output";
    const payer = await newPayer(market, relayer, 50_000_000n);

    // All at once: the relayer opens, settles and refunds each agent's calls in shared
    // transactions, several events of one kind in one transaction, each counted once.
    const calls = [...Array(6).fill(good), ...Array(6).fill(bad)] as ListedAgent[];
    const answers: RelayerExecution[] = await Promise.all(
      calls.map(async (agent) => {
        const response = await execute(relayer!, payer, agent.address);
        // A failed execution answers in the error shape, with the execution inside.
        const body = response.body as unknown as RelayerExecution & { error?: { execution: RelayerExecution } };
        return body.error ? body.error.execution : body;
      }),
    );
    assert.equal(new Set(answers.map((a) => a.id)).size, 12);

    await waitFor("every execution, closed, in the indexer", async () => {
      const data = await query(indexer!, `query($key: String!) { usage(dimension: API_KEY, subject: $key) { totals(window: H24) { executions settled refunded } } }`, {
        key: payer.apiKeyId,
      });
      const totals = data.usage.totals;
      return totals.executions === 12 && totals.settled + totals.refunded === 12;
    });

    for (const answer of answers) {
      const data: Record<string, any> = await query(indexer!, `query($id: ID!) { execution(id: $id) { id state payer apiKeyId amount { usdc } creatorShare { usdc } fee { usdc } } }`, { id: answer.id });
      const execution = data.execution;
      assert.equal(execution.apiKeyId, payer.apiKeyId);
      assert.equal(execution.payer, payer.wallet.publicKey.toBase58());
      if (answer.status === "succeeded") {
        assert.equal(execution.state, "SETTLED");
        assert.deepEqual([execution.amount.usdc, execution.creatorShare.usdc, execution.fee.usdc], [answer.charge!.amount_usdc, answer.charge!.creator_share_usdc, answer.charge!.fee_usdc]);
      } else {
        assert.equal(execution.state, "REFUNDED", JSON.stringify(answer));
      }
    }
    const { agent } = await query(indexer, `query($a: String!) { agent(address: $a) { status stats(window: H1) { executions settled successRate } } }`, { a: good.address.toBase58() });
    assert.deepEqual(agent, { status: "OPERATIONAL", stats: { executions: 6, settled: 6, successRate: 1 } });
    const { agent: failing } = await query(indexer, `query($a: String!) { agent(address: $a) { status stats(window: H1) { refunded { outputInvalid againstCreator } successRate } } }`, {
      a: bad.address.toBase58(),
    });
    assert.deepEqual(failing, { status: "DOWN", stats: { refunded: { outputInvalid: 6, againstCreator: 6 }, successRate: 0 } });

    const result = await reconcile(indexer.rpc, indexer.pool, indexer.config.schema, indexer.config.program_id);
    assert.deepEqual(result.differences, []);
    assert.equal(result.executions, 12);
  });
});
