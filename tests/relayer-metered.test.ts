// Metered pricing through the relayer: a call holds the most it may cost, the creator is told the
// units that buys and signs the units it used, and the settlement charges exactly those units,
// split 99/1, returning the rest to the payer in the same transaction. Units above the call's
// maximum are refunded whole; a caller's maximum below one unit opens no escrow. Balances are
// checked on chain to the unit, and every payer debit equals creator credits plus fees.
import { strict as assert } from "node:assert";

import type { Execution } from "@agent-market/client";
import { splitPayment, type Pricing } from "@agent-market/program";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, feeShardsTotal, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, startRelayer, type ApiResponse, type RunningRelayer } from "./src/relayer.js";

const PRICE_PER_UNIT = 1_023n;
const MAX_UNITS = 500n;
const METERED: Pricing = { kind: "Metered", pricePerUnitUsdc: PRICE_PER_UNIT, maxUnitsPerCall: MAX_UNITS };

/** The execution as the API answers it, typed from its OpenAPI document. */
type ExecutionBody = Execution;

const usdc = (base: bigint) => (Number(base) / 1e6).toFixed(6);
const words = (task: string) => BigInt(task.split(/\s+/).length);

describe("relayer: metered pricing", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer, { pricing: METERED });
    // Each answer reports one unit a word of its task: calls of different tasks use different units.
    agent.server.units = (request) => words(request.task);
  });
  after(async () => {
    await agent?.server.close();
    await relayer?.close();
    await market?.stop();
  });

  async function run(apiKey: string, task: string, max_price_usdc?: string) {
    const ran = await execute(relayer, { apiKey }, agent.address, {
      task,
      parameters: { language: "en" },
      ...(max_price_usdc === undefined ? {} : { max_price_usdc }),
    });
    return ran as unknown as ApiResponse<ExecutionBody>;
  }

  it("lists the unit and its price, and the most a call costs", async () => {
    const listed = await api<{ pricing: Record<string, unknown> }>(relayer, "GET", `/v1/agents/${agent.address.toBase58()}`);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.pricing, {
      model: "metered",
      price_per_unit_usdc: usdc(PRICE_PER_UNIT),
      unit: "words",
      max_units_per_call: MAX_UNITS.toString(),
    });
  });

  it("charges the units used, split exactly, and returns the rest to the payer in the settlement", async () => {
    const payer = await newPayer(market, relayer, 2_000_000n);
    const [creatorBefore, feesBefore] = [await market.usdc(agent.creator.tokenAccount), await feeShardsTotal(market)];
    const task = "count these seven words for me please";
    const ran = await run(payer.apiKey, task);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    const units = words(task);
    const held = PRICE_PER_UNIT * MAX_UNITS;
    const charged = units * PRICE_PER_UNIT;
    const split = splitPayment(charged);
    assert.deepEqual(ran.body.charge, {
      amount_usdc: usdc(charged),
      charged_usdc: usdc(charged),
      held_usdc: usdc(held),
      returned_usdc: usdc(held - charged),
      units: units.toString(),
      price_per_unit_usdc: usdc(PRICE_PER_UNIT),
      max_units: MAX_UNITS.toString(),
      creator_share_usdc: usdc(split.creatorShareUsdc),
      fee_usdc: usdc(split.feeUsdc),
      currency: "USDC",
      covered_by_subscription: false,
    });
    // The creator was told the most units the escrow pays for.
    const request = agent.server.received.at(-1)!.body;
    assert.deepEqual([request.max_units, request.price_per_unit_usdc], [MAX_UNITS.toString(), usdc(PRICE_PER_UNIT)]);
    assert.equal(await market.usdc(payer.tokenAccount), 2_000_000n - charged, "only the units used left the payer");
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + split.creatorShareUsdc);
    assert.equal(await feeShardsTotal(market), feesBefore + split.feeUsdc);
  });

  it("holds only the whole units the caller's maximum buys, and refuses a maximum below one unit before any escrow", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const refused = await run(payer.apiKey, "two words", usdc(PRICE_PER_UNIT - 1n));
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused as unknown as ApiResponse<Record<string, unknown>>), "price_above_maximum");
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n, "nothing was held");

    // 3.5 units' worth holds 3; the creator is told so.
    const ran = await run(payer.apiKey, "two words", usdc(PRICE_PER_UNIT * 7n / 2n));
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    assert.deepEqual(
      [ran.body.charge.held_usdc, ran.body.charge.max_units, ran.body.charge.charged_usdc],
      [usdc(PRICE_PER_UNIT * 3n), "3", usdc(PRICE_PER_UNIT * 2n)],
    );
    assert.equal(agent.server.received.at(-1)!.body.max_units, "3");
  });

  it("refunds a call whose answer reports more units than its escrow holds, and charges zero units nothing", async () => {
    const payer = await newPayer(market, relayer, 1_000_000n);
    const over = (await run(payer.apiKey, "one two three four five", usdc(PRICE_PER_UNIT * 4n))) as unknown as ApiResponse<{
      error: { code: string; execution: ExecutionBody };
    }>;
    assert.equal(over.status, 502, JSON.stringify(over.body));
    assert.equal(over.body.error.code, "invalid_result");
    const refunded = over.body.error.execution;
    assert.equal(refunded.status, "refunded");
    assert.deepEqual(
      [refunded.charge.charged_usdc, refunded.charge.returned_usdc, refunded.charge.units],
      ["0.000000", usdc(PRICE_PER_UNIT * 4n), null],
    );

    agent.server.units = () => 0n;
    try {
      const free = await run(payer.apiKey, "nothing to count");
      assert.equal(free.body.status, "succeeded", JSON.stringify(free.body));
      assert.deepEqual(
        [free.body.charge.charged_usdc, free.body.charge.returned_usdc, free.body.charge.fee_usdc],
        ["0.000000", usdc(PRICE_PER_UNIT * MAX_UNITS), "0.000000"],
      );
    } finally {
      agent.server.units = (request) => words(request.task);
    }
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n, "neither call cost anything");
  });

  it("counts the held amount against a key's cap while a call runs, and only its charge once settled", async () => {
    // Room for one call's hold and a little: a second call fits only once the first counts its charge alone.
    const payer = await newPayer(market, relayer, 2_000_000n, 2_000_000n, { spending_cap_usdc: "0.600000" });
    const first = await run(payer.apiKey, "three small words");
    assert.equal(first.body.status, "succeeded", JSON.stringify(first.body));
    const id = (first.body as Execution).id;
    for (let i = 0; ; i += 1) {
      assert.ok(i < 200, "the settlement is confirmed");
      const got = await api<Execution>(relayer, "GET", `/v1/executions/${id}`, { token: payer.apiKey });
      if (got.body.transactions.confirmation === "confirmed") break;
      await sleep(100);
    }
    const key = await api<{ spent_usdc: string }>(relayer, "GET", `/v1/keys/${payer.apiKeyId}`, { token: payer.token });
    assert.equal(key.body.spent_usdc, usdc(3n * PRICE_PER_UNIT), "the key spent the charge, not the hold");
    const second = await run(payer.apiKey, "three more words");
    assert.equal(second.body.status, "succeeded", JSON.stringify(second.body));
  });

  it("settles concurrent calls of different units, every payer's rest exact, and conserves every base unit", async () => {
    agent.server.sign_batch = true;
    const payers = await Promise.all([1, 2, 3, 4].map(() => newPayer(market, relayer, 1_000_000n)));
    const [creatorBefore, feesBefore] = [await market.usdc(agent.creator.tokenAccount), await feeShardsTotal(market)];
    const tasks = ["a", "a b c", "a b c d e f g h i j k l", "a b"];
    const runs = await Promise.all(payers.map((payer, i) => run(payer.apiKey, tasks[i]!)));
    for (const ran of runs) {
      assert.equal(ran.body.status, "succeeded", JSON.stringify(ran.body));
    }
    let creatorShares = 0n;
    let fees = 0n;
    for (const [i, payer] of payers.entries()) {
      const charged = words(tasks[i]!) * PRICE_PER_UNIT;
      const split = splitPayment(charged);
      creatorShares += split.creatorShareUsdc;
      fees += split.feeUsdc;
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - charged, `payer ${i}`);
    }
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + creatorShares);
    assert.equal(await feeShardsTotal(market), feesBefore + fees);
  });
});
