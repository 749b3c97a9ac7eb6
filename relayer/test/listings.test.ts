// POST /v1/agents in the relayer's own package: the creator checklist against the accounts a
// stand-in RPC holds, the probe answered by a real creator kit. Who may list (the session of the
// agent's creator), what a listing costs (one probe of the creator's service, no transaction),
// and each failing step's exact code. tests/relayer-listings.test.ts lists agents a creator
// registered on localnet, end to end.
import assert from "node:assert/strict";

import type { Agent } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { LISTING_DOC, MIN_COLLATERAL_USDC, PRICE_WIRE, StandInMarket, type Creator } from "./stand-in-market.js";
import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

describe("listings against the chain's accounts (stand-in RPC)", function () {
  this.timeout(30_000);
  let market: StandInMarket;
  let relayer: TestRelayer;
  const creators: Creator[] = [];

  before(async () => {
    market = await StandInMarket.start();
    relayer = await startTestRelayer(market.env());
  });

  after(async () => {
    await Promise.all(creators.map((creator) => creator.close()));
    await relayer?.close();
    await market?.close();
  });

  async function creator(): Promise<Creator & { token: string }> {
    const registered = await market.register(relayer.services.config.networks.devnet!.marketplace_public_key);
    creators.push(registered);
    return { ...registered, token: await signIn(relayer.app, registered.wallet) };
  }

  const body = (c: Creator) => ({
    agent: c.agent.toBase58(),
    ...LISTING_DOC,
    endpoint: c.endpoint,
    signing_key: new PublicKey(c.terms.signingKey).toBase58(),
    pricing: PRICE_WIRE,
  });

  const list = (token: string, payload: Record<string, unknown>) =>
    relayer.app.inject({ method: "POST", url: "/v1/agents", headers: bearer(token), payload });

  async function changeTerms(c: Creator, change: Partial<Agent>): Promise<void> {
    await market.setAgent(c.agent, { ...c.terms, ...change });
  }

  it("lists an agent whose account holds the listing's terms, after one signed probe, sending nothing", async () => {
    const c = await creator();
    const sent = market.rpc.methods.length;
    const response = await list(c.token, body(c));
    assert.equal(response.statusCode, 201, response.body);
    const listing = response.json() as Record<string, unknown>;
    assert.deepEqual(
      [listing.id, listing.network, listing.creator, listing.status, listing.collateral_usdc, listing.minimum_collateral_usdc],
      [c.agent.toBase58(), "devnet", c.wallet.publicKey.toBase58(), "active", "100.000000", "100.000000"],
    );
    assert.deepEqual(listing.pricing, PRICE_WIRE);
    assert.equal(c.executions(), 1, "the creator's service ran one probe");
    const reads = market.rpc.methods.slice(sent);
    assert.ok(reads.length > 0 && reads.every((method) => method.startsWith("get")), `reads only: ${reads.join(", ")}`);

    const again = await list(c.token, body(c));
    assert.equal(again.statusCode, 409);
    assert.equal(errorOf(again).code, "agent_already_listed");
    assert.equal(c.executions(), 1, "a listing repeated probes nothing");
  });

  it("is the agent's creator's alone to list: no session is 401, another wallet's session 403", async () => {
    const c = await creator();
    const anonymous = await relayer.app.inject({ method: "POST", url: "/v1/agents", payload: body(c) });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(errorOf(anonymous).code, "session_required");
    const stranger = await signIn(relayer.app);
    const foreign = await list(stranger, body(c));
    assert.equal(foreign.statusCode, 403);
    assert.equal(errorOf(foreign).code, "not_agent_creator");
    assert.equal(c.executions(), 0, "a refused listing probes nothing");
  });

  it("refuses each checklist step the account fails, by its code, before probing the creator's service", async () => {
    const cases: [string, (c: Creator) => Promise<void>, number, string][] = [
      ["no account", async (c) => market.rpc.remove(c.agent), 422, "agent_not_on_chain"],
      ["retired", (c) => changeTerms(c, { status: "Retired" }), 422, "agent_retired_on_chain"],
      ["another signing key", (c) => changeTerms(c, { signingKey: new Uint8Array(32).fill(7) }), 422, "signing_key_mismatch"],
      ["another price", (c) => changeTerms(c, { pricing: { kind: "PayPerUse", priceUsdc: 300_000n } }), 422, "pricing_mismatch"],
      ["another endpoint", (c) => changeTerms(c, { endpoint: "http://127.0.0.1:9/elsewhere" }), 422, "endpoint_mismatch"],
      ["another listing hash", (c) => changeTerms(c, { listingHash: new Uint8Array(32).fill(9) }), 422, "listing_hash_mismatch"],
      ["collateral below the minimum", (c) => changeTerms(c, { collateralUsdc: MIN_COLLATERAL_USDC - 1n }), 422, "collateral_below_minimum"],
    ];
    for (const [name, arrange, status, code] of cases) {
      const c = await creator();
      await arrange(c);
      const response = await list(c.token, body(c));
      assert.equal(`${name}: ${response.statusCode} ${errorOf(response).code}`, `${name}: ${status} ${code}`);
      assert.equal(c.executions(), 0, `${name}: nothing probed`);
    }
  });

  it("answers 503 chain_unavailable while the RPC is down, and lists once it is back", async () => {
    const c = await creator();
    market.rpc.down = true;
    try {
      const response = await list(c.token, body(c));
      assert.equal(response.statusCode, 503);
      assert.equal(errorOf(response).code, "chain_unavailable");
    } finally {
      market.rpc.down = false;
    }
    assert.equal((await list(c.token, body(c))).statusCode, 201);
  });
});
