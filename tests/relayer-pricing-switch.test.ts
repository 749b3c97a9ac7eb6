// A subscription outlives its agent's pricing switch and retirement: the relayer routes a live
// subscription's calls as covered, on the terms it was bought under, as the program prices them
// (open_escrow), until it expires; then the pricing of the day applies. Balances are checked on
// chain to the unit.
import { strict as assert } from "node:assert";

import { retireAgentInstruction, type Pricing } from "@agent-market/program";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, pricingWire, repriceOnChain, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;
const PERIOD_PRICE = 1_000_000n;

interface Charge {
  amount_usdc: string;
  covered_by_subscription: boolean;
}

describe("relayer: subscriptions after a pricing switch or retirement", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    await relayer?.close();
    await market?.stop();
  });

  async function listed(pricing: Pricing): Promise<ListedAgent> {
    const agent = await listAgent(market, relayer, { pricing });
    agents.push(agent);
    return agent;
  }

  /**
   * The creator's update_agent with `pricing`, every other term as registered, then the listing's
   * PATCH with the same pricing, as the dashboard's listing editor does (until then the relayer
   * charges no call on terms the listing does not show).
   */
  async function reprice(agent: ListedAgent, pricing: Pricing): Promise<void> {
    await repriceOnChain(market, agent, pricing);
    const relisted = await api(relayer, "PATCH", `/v1/agents/${agent.address.toBase58()}`, {
      token: await signIn(relayer, agent.creator.wallet),
      body: { pricing: pricingWire(pricing) },
    });
    assert.equal(relisted.status, 200, JSON.stringify(relisted.body));
  }

  async function subscribe(payer: Payer, agent: ListedAgent): Promise<{ expires_at: string }> {
    const bought = await api<{ expires_at: string }>(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, { token: payer.apiKey });
    assert.equal(bought.status, 200, JSON.stringify(bought.body));
    return bought.body;
  }

  async function charged(payer: Payer, agent: ListedAgent): Promise<Charge> {
    const ran = await execute(relayer, payer, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    return (ran.body as { charge: Charge }).charge;
  }

  async function assertCovered(payer: Payer, agent: ListedAgent, calls: number): Promise<void> {
    const before = await market.usdc(payer.tokenAccount);
    for (let call = 0; call < calls; call += 1) {
      const charge = await charged(payer, agent);
      assert.deepEqual([charge.amount_usdc, charge.covered_by_subscription], ["0.000000", true]);
    }
    assert.equal(await market.usdc(payer.tokenAccount), before, "covered calls cost nothing");
  }

  /** Until both the relayer's clock and the chain's are past `expires_at`. */
  async function waitPast(expires_at: string): Promise<void> {
    const expires_secs = Date.parse(expires_at) / 1000;
    for (;;) {
      if (Date.now() / 1000 > expires_secs && Number(await market.now()) > expires_secs) return;
      await sleep(250);
    }
  }

  it("covers a live subscription's calls after the agent switched to pay-per-use, and charges the new price once it expires", async () => {
    const agent = await listed({ kind: "Subscription", periodPriceUsdc: PERIOD_PRICE, periodSecs: 15 });
    const payer = await newPayer(market, relayer, 3_000_000n);
    const bought = await subscribe(payer, agent);
    await reprice(agent, { kind: "PayPerUse", priceUsdc: PRICE });

    await assertCovered(payer, agent, 2);
    // A wallet without a subscription pays the new price.
    const stranger = await newPayer(market, relayer, 1_000_000n);
    assert.equal((await charged(stranger, agent)).amount_usdc, "0.250000");
    assert.equal(await market.usdc(stranger.tokenAccount), 1_000_000n - PRICE);

    await waitPast(bought.expires_at);
    const after = await charged(payer, agent);
    assert.deepEqual([after.amount_usdc, after.covered_by_subscription], ["0.250000", false]);
    assert.equal(await market.usdc(payer.tokenAccount), 3_000_000n - PERIOD_PRICE - PRICE);
  });

  it("covers a live unlimited subscription past a hybrid plan's included calls, and sells no period of the new plan meanwhile", async () => {
    const agent = await listed({ kind: "Subscription", periodPriceUsdc: PERIOD_PRICE, periodSecs: 3600 });
    const payer = await newPayer(market, relayer, 3_000_000n);
    await subscribe(payer, agent);
    await reprice(agent, { kind: "Hybrid", periodPriceUsdc: PERIOD_PRICE, periodSecs: 3600, includedCalls: 1, overagePriceUsdc: 300_000n });

    await assertCovered(payer, agent, 3);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const renew = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, { token: payer.apiKey });
    assert.equal(renew.status, 409, JSON.stringify(renew.body));
    assert.equal(errorCode(renew), "subscription_not_renewable");
    assert.equal(await market.usdc(payer.tokenAccount), 3_000_000n - PERIOD_PRICE);
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore);
  });

  it("keeps serving a retired agent's live subscribers, and refuses everyone else", async () => {
    const agent = await listed({ kind: "Subscription", periodPriceUsdc: PERIOD_PRICE, periodSecs: 3600 });
    const payer = await newPayer(market, relayer, 3_000_000n);
    const stranger = await newPayer(market, relayer, 3_000_000n);
    await subscribe(payer, agent);
    await market.send([retireAgentInstruction({ programId: market.programId, creator: agent.creator.wallet.publicKey, agent: agent.address })], [agent.creator.wallet]);

    // Retired on chain only: the subscriber is served, anyone else is told it is retired.
    await assertCovered(payer, agent, 1);
    const unavailable = await execute(relayer, stranger, agent.address);
    assert.equal(unavailable.status, 409);
    assert.equal(errorCode(unavailable), "agent_unavailable");

    // The listing retired too: the same.
    const token = await signIn(relayer, agent.creator.wallet);
    const retired = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/retire?network=devnet`, { token });
    assert.equal(retired.status, 200, JSON.stringify(retired.body));
    await assertCovered(payer, agent, 2);
    const unknown = await execute(relayer, stranger, agent.address);
    assert.equal(unknown.status, 404);
    assert.equal(errorCode(unknown), "resource_not_found");
    const purchase = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, { token: stranger.apiKey });
    assert.equal(purchase.status, 404);
    assert.equal(await market.usdc(stranger.tokenAccount), 3_000_000n, "nothing charged to anyone else");
  });
});
