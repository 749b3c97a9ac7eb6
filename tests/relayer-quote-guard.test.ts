// The quote is the most a call or a subscription period charges: the relayer passes it to
// open_escrow and subscribe as `max_amount_usdc`, and the program refuses (PriceAboveMaximum) when
// the creator raised the price with update_agent between the quote and the transaction. A price
// raised before the quote is not charged either: the agent's account no longer holds its
// listing's pricing, so the call is refused (agent_terms_changed) and the listing paused until the
// creator lists the new price; and a caller's `max_price_usdc` below the price is refused before
// anything is sent. Nothing is charged; balances are checked on chain to the unit.
import { strict as assert } from "node:assert";

import {
  escrowPda,
  fetchAgent,
  parseExecutionId,
  subscriptionPda,
  updateAgentInstruction,
  type Pricing,
} from "@agent-market/program";
import type { PublicKey } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, feeShardsTotal, listAgent, newPayer, pricingWire, repriceOnChain, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;

interface ErrorAnswer extends Record<string, unknown> {
  error: { code: string; message: string; execution_id?: string };
}

describe("relayer: a price raised after the quote is refused", function () {
  this.timeout(120_000);
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

  const reprice = (agent: ListedAgent, pricing: Pricing) => repriceOnChain(market, agent, pricing);

  /**
   * Makes the relayer's next `method` call that reads `agent` run `change` after the read
   * returned: the relayer goes on with what it read before the change, as if the creator's
   * transaction had landed between its quote and its own transaction.
   */
  function changeAfterNextRead<T extends object, K extends keyof T>(
    client: T,
    method: K,
    agent: PublicKey,
    change: () => Promise<void>,
  ): void {
    const original = client[method] as unknown as (addresses: PublicKey[], ...rest: unknown[]) => Promise<unknown>;
    const patched = async (addresses: PublicKey[], ...rest: unknown[]) => {
      const read = await original.call(client, addresses, ...rest);
      if (addresses.some((address) => address.equals(agent))) {
        client[method] = original as unknown as T[K];
        await change();
      }
      return read;
    };
    client[method] = patched as unknown as T[K];
  }

  async function balances(payer: Payer, agent: ListedAgent): Promise<bigint[]> {
    return [await market.usdc(payer.tokenAccount), await market.usdc(agent.creator.tokenAccount), await feeShardsTotal(market)];
  }

  it("a sync execution quoted before update_agent raised the price: price_changed (PriceAboveMaximum), no escrow, nothing charged", async () => {
    const agent = await listed({ kind: "PayPerUse", priceUsdc: PRICE });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const before = await balances(payer, agent);
    changeAfterNextRead(relayer.services.chain.rpc("devnet"), "getMultipleAccounts", agent.address, () =>
      reprice(agent, { kind: "PayPerUse", priceUsdc: 2n * PRICE }),
    );

    const refused = await execute(relayer, payer, agent.address);
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused), "price_changed");
    const { error } = refused.body as unknown as ErrorAnswer;
    assert.match(error.message, /PriceAboveMaximum/);
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    const executionId = parseExecutionId(error.execution_id!);
    assert.ok(executionId);
    assert.equal(await market.connection.getAccountInfo(escrowPda(executionId, market.programId), "confirmed"), null, "no escrow opened");

    // The next call is not charged the new price either: the listing still shows the old one.
    const next = await execute(relayer, payer, agent.address);
    assert.equal(next.status, 409, JSON.stringify(next.body));
    assert.equal(errorCode(next), "agent_terms_changed");
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
  });

  /** The relayer's SOL: what any transaction it sends costs. */
  const relayerSol = () => market.lamports(market.relayer.publicKey);

  async function executionsOf(payer: Payer): Promise<number> {
    const { rows } = await relayer.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM executions WHERE api_key_id = $1", [
      payer.apiKeyId,
    ]);
    return rows[0]!.n;
  }

  it("a price raised on chain before the call (0.01 to 0.05): agent_terms_changed, nothing sent; paused until the creator lists it, then charged only within max_price_usdc", async () => {
    const shown = 10_000n;
    const raised = 50_000n;
    const agent = await listed({ kind: "PayPerUse", priceUsdc: shown });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const ok = await execute(relayer, payer, agent.address, { task: "first call", parameters: { language: "en" }, max_price_usdc: "0.010000" });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await reprice(agent, { kind: "PayPerUse", priceUsdc: raised });

    const before = await balances(payer, agent);
    const sol = await relayerSol();
    const refused = await execute(relayer, payer, agent.address);
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused), "agent_terms_changed");
    const error = (refused.body as { error: { listed_pricing: unknown; on_chain_pricing: unknown } }).error;
    assert.deepEqual(error.listed_pricing, { model: "pay_per_use", price_usdc: "0.010000" });
    assert.deepEqual(error.on_chain_pricing, { model: "pay_per_use", price_usdc: "0.050000" });
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    assert.equal(await relayerSol(), sol, "no transaction was sent");

    const path = `/v1/agents/${agent.address.toBase58()}`;
    const shownListing = await api<{ status: string; pause_reason: string | null }>(relayer, "GET", path);
    assert.deepEqual([shownListing.body.status, shownListing.body.pause_reason], ["paused", "terms_changed"]);
    const whilePaused = await execute(relayer, payer, agent.address);
    assert.equal(errorCode(whilePaused), "agent_unavailable");

    // The creator lists the new price: the listing is active again, and shows it.
    const token = await signIn(relayer, agent.creator.wallet);
    const patched = await api<{ status: string; pause_reason: string | null; pricing: unknown }>(relayer, "PATCH", `${path}?network=devnet`, {
      token,
      body: { pricing: pricingWire({ kind: "PayPerUse", priceUsdc: raised }) },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual([patched.body.status, patched.body.pause_reason], ["active", null]);

    // A caller still holding the old price is refused before anything is sent.
    const stale = await execute(relayer, payer, agent.address, { task: "t", parameters: { language: "en" }, max_price_usdc: "0.010000" });
    assert.equal(stale.status, 409, JSON.stringify(stale.body));
    assert.equal(errorCode(stale), "price_above_maximum");
    assert.deepEqual((stale.body as { error: { price_usdc: string; max_price_usdc: string } }).error, {
      ...(stale.body as { error: object }).error,
      price_usdc: "0.050000",
      max_price_usdc: "0.010000",
    });
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    assert.equal(await relayerSol(), sol, "no transaction was sent");

    const agreed = await execute(relayer, payer, agent.address, { task: "t", parameters: { language: "en" }, max_price_usdc: "0.050000" });
    assert.equal(agreed.status, 200, JSON.stringify(agreed.body));
    assert.equal(await market.usdc(payer.tokenAccount), before[0]! - raised);
  });

  it("a listing hash changed on chain: agent_terms_changed with both hashes, nothing sent, the listing paused", async () => {
    const agent = await listed({ kind: "PayPerUse", priceUsdc: PRICE });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const onChain = await fetchAgent(market.connection, agent.address, { programId: market.programId });
    await market.send(
      [
        updateAgentInstruction({
          programId: market.programId,
          creator: agent.creator.wallet.publicKey,
          agent: agent.address,
          payoutAccount: onChain!.payoutAccount,
          terms: {
            signingKey: onChain!.signingKey,
            endpoint: onChain!.endpoint,
            listingHash: new Uint8Array(32).fill(7),
            pricing: onChain!.pricing,
            maxExecutionSecs: onChain!.maxExecutionSecs,
          },
        }),
      ],
      [agent.creator.wallet],
    );
    const before = await balances(payer, agent);
    const sol = await relayerSol();
    const refused = await execute(relayer, payer, agent.address);
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused), "agent_terms_changed");
    assert.equal((refused.body as { error: { on_chain_listing_hash: string } }).error.on_chain_listing_hash, "07".repeat(32));
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    assert.equal(await relayerSol(), sol, "no transaction was sent");
    const shown = await api<{ status: string; pause_reason: string | null }>(relayer, "GET", `/v1/agents/${agent.address.toBase58()}`);
    assert.deepEqual([shown.body.status, shown.body.pause_reason], ["paused", "terms_changed"]);
  });

  it("max_price_usdc below the price: 409 price_above_maximum before any row or transaction; malformed, 400", async () => {
    const agent = await listed({ kind: "PayPerUse", priceUsdc: PRICE });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const before = await balances(payer, agent);
    const sol = await relayerSol();
    const refused = await execute(relayer, payer, agent.address, { task: "t", parameters: { language: "en" }, max_price_usdc: "0.249999" });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused), "price_above_maximum");
    assert.equal((refused.body as { error: { param: string } }).error.param, "max_price_usdc");
    for (const bad of ["0.25", "-1.000000", "1e3", 0.25]) {
      const malformed = await execute(relayer, payer, agent.address, { task: "t", parameters: { language: "en" }, max_price_usdc: bad });
      assert.equal(malformed.status, 400, JSON.stringify(malformed.body));
      assert.equal(errorCode(malformed), "validation_failed");
    }
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    assert.equal(await relayerSol(), sol, "no transaction was sent");
    assert.equal(await executionsOf(payer), 0, "no execution was recorded");
    const exact = await execute(relayer, payer, agent.address, { task: "t", parameters: { language: "en" }, max_price_usdc: "0.250000" });
    assert.equal(exact.status, 200, JSON.stringify(exact.body));
  });

  it("a subscription period above max_price_usdc: 409 price_above_maximum, nothing sent", async () => {
    const agent = await listed({ kind: "Subscription", periodPriceUsdc: 1_000_000n, periodSecs: 3600 });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const before = await balances(payer, agent);
    const sol = await relayerSol();
    const refused = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, {
      token: payer.apiKey,
      body: { max_price_usdc: "0.999999" },
    });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused), "price_above_maximum");
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    assert.equal(await relayerSol(), sol, "no transaction was sent");
    const bought = await api(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, {
      token: payer.apiKey,
      body: { max_price_usdc: "1.000000" },
    });
    assert.equal(bought.status, 200, JSON.stringify(bought.body));
  });

  it("an async execution keeps its quote to the job that opens the escrow: failed with price_changed, nothing charged", async () => {
    const agent = await listed({ kind: "PayPerUse", priceUsdc: PRICE });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const before = await balances(payer, agent);
    changeAfterNextRead(relayer.services.chain.rpc("devnet"), "getMultipleAccounts", agent.address, () =>
      reprice(agent, { kind: "PayPerUse", priceUsdc: PRICE + 1n }),
    );

    const accepted = await execute(relayer, payer, agent.address, undefined, { prefer: "respond-async" });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const id = (accepted.body as { id: string }).id;
    const deadline = Date.now() + 20_000;
    let execution: { status: string; failure: { code: string } | null } | undefined;
    while (Date.now() < deadline) {
      const got = await api<{ status: string; failure: { code: string } | null }>(relayer, "GET", `/v1/executions/${id}`, {
        token: payer.apiKey,
      });
      if (got.body.status !== "pending" && got.body.status !== "running") {
        execution = got.body;
        break;
      }
      await sleep(100);
    }
    assert.ok(execution, "the execution finished");
    assert.equal(execution.status, "failed", JSON.stringify(execution));
    assert.equal(execution.failure?.code, "price_changed");
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    assert.equal(await market.connection.getAccountInfo(escrowPda(parseExecutionId(id)!, market.programId), "confirmed"), null);
  });

  it("a subscription whose period price rose after it was read: price_changed (PriceAboveMaximum), nothing charged", async () => {
    const agent = await listed({ kind: "Subscription", periodPriceUsdc: 1_000_000n, periodSecs: 3600 });
    const payer = await newPayer(market, relayer, 10_000_000n);
    const before = await balances(payer, agent);
    changeAfterNextRead(relayer.services.chain.connection("devnet"), "getMultipleAccountsInfo", agent.address, () =>
      reprice(agent, { kind: "Subscription", periodPriceUsdc: 5_000_000n, periodSecs: 3600 }),
    );

    const refused = await api<ErrorAnswer>(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/subscription`, {
      token: payer.apiKey,
    });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(errorCode(refused), "price_changed");
    assert.match(refused.body.error.message, /PriceAboveMaximum/);
    assert.deepEqual(await balances(payer, agent), before, "nothing was charged");
    const subscription = subscriptionPda(agent.address, payer.wallet.publicKey, market.programId);
    assert.equal(await market.connection.getAccountInfo(subscription, "confirmed"), null, "no subscription");
  });
});
