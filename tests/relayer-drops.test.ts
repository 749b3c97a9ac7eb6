// Executions on a devnet-like localnet that loses a third of the transactions sent to it: the
// relayer sends its recorded transactions again until they land (re-signing only once their
// blockhash has expired), so every execution still succeeds, is settled exactly once, and agrees
// with the chain.
import { strict as assert } from "node:assert";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;
const EXECUTIONS = 12;

describe("relayer: executions on a chain that loses transactions", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start({
      args: ["--profile", "devnet-like", "--process-at", "slot", "--drop-rate", "0.3", "--seed", "7", "--slot-ms", "100"],
    });
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer);
  });
  after(async () => {
    await agent?.server.close();
    await relayer?.close();
    await market?.stop();
  });

  it("settles every execution exactly once, without handing any to the finish job's slow path", async () => {
    const payer = await newPayer(market, relayer, 10_000_000n);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const responses = await Promise.all(Array.from({ length: EXECUTIONS }, () => execute(relayer, payer, agent.address)));
    for (const response of responses) {
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.status, "succeeded");
    }
    // Each settlement is confirmed well before the tracker would give it up (20 s): a lost one
    // was sent again.
    const ids = responses.map((response) => response.body.id as string);
    const deadline = Date.now() + 10_000;
    for (const id of ids) {
      for (;;) {
        const got = await api<{ transactions: { confirmation: string | null } }>(relayer, "GET", `/v1/executions/${id}`, {
          token: payer.apiKey,
        });
        if (got.body.transactions.confirmation === "confirmed") break;
        assert.ok(Date.now() < deadline, `${id} not confirmed in time: ${JSON.stringify(got.body)}`);
        await sleep(100);
      }
    }
    assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n - BigInt(EXECUTIONS) * PRICE);
    assert.equal(await market.usdc(agent.creator.tokenAccount) - creatorBefore, (BigInt(EXECUTIONS) * PRICE * 99n) / 100n);
    const report = await relayer.services.reconcile("devnet");
    assert.deepEqual(report.differences, []);
    assert.equal(report.executions, EXECUTIONS);
  });
});
