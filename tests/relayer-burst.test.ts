// Bursts on the server setup (PostgreSQL, Redis): fifty concurrent executions under one
// Idempotency-Key open exactly one escrow, the others replay or are told to retry in the one
// error shape; sixty-four concurrent executions without a key all succeed, each charged once.
// No 5xx anywhere, and reconciliation finds nothing.
import { strict as assert } from "node:assert";

import { splitPayment } from "@agent-market/program";

import { TestMarket } from "./src/fixtures.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { errorCode, expectReconciled, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;

describe("relayer: concurrent bursts", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer);
  });
  after(async () => {
    try {
      if (relayer) {
        await expectReconciled(relayer, 30_000);
      }
    } finally {
      await agent?.server.close();
      await relayer?.close();
      await market?.stop();
    }
  });

  it("50 concurrent executions with one Idempotency-Key: one escrow; the others replay it or get a retryable 409 in the error shape", async () => {
    const payer = await newPayer(market, relayer, 10_000_000n);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => execute(relayer, payer, agent.address, undefined, { "idempotency-key": "burst-one" })),
    );
    const statuses = responses.map((r) => r.status);
    assert.ok(statuses.every((status) => status < 500), `no 5xx: ${statuses.join(",")}`);
    const ids = new Set<string>();
    for (const response of responses) {
      if (response.status === 200) ids.add((response.body as { id: string }).id);
      else {
        assert.equal(response.status, 409, JSON.stringify(response.body));
        assert.equal(errorCode(response), "idempotency_request_in_progress");
      }
    }
    assert.equal(ids.size, 1, "every 200 is the one execution");
    const { rows } = await relayer.services.db.query("SELECT count(*)::int AS n FROM executions WHERE api_key_id = $1", [payer.apiKeyId]);
    assert.equal(rows[0].n, 1, "exactly one execution, one escrow");
    assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n - PRICE, "charged once");
    const replay = await execute(relayer, payer, agent.address, undefined, { "idempotency-key": "burst-one" });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
  });

  it("64 concurrent executions without a key: all 200, each charged once", async () => {
    const payer = await newPayer(market, relayer, 64n * PRICE);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const responses = await Promise.all(Array.from({ length: 64 }, () => execute(relayer, payer, agent.address)));
    const statuses = responses.map((r) => r.status);
    assert.deepEqual(statuses, Array(64).fill(200), JSON.stringify(responses.find((r) => r.status !== 200)?.body ?? null));
    assert.equal(new Set(responses.map((r) => (r.body as { id: string }).id)).size, 64);
    assert.equal(await market.usdc(payer.tokenAccount), 0n, "64 prices, to the unit");
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + 64n * splitPayment(PRICE).creatorShareUsdc);
  });
});
