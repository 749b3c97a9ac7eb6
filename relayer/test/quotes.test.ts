// An execution's quote in the relayer's own package: POST /v1/agents/:agent_id/execute refused
// from what the accounts hold (a stand-in RPC), each refusal by its exact code, before anything
// is sent to the chain or the creator. What a caller gains by calling wrongly, a thousand times
// if it likes: reads of the chain and none of the creator's compute. The calls that pass their
// quote open an escrow; those run against localnet in tests/relayer-*.test.ts.
import assert from "node:assert/strict";

import { delegatePda } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { LISTING_DOC, PRICE_USDC, PRICE_WIRE, StandInMarket, type Creator } from "./stand-in-market.js";
import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

describe("quotes against the chain's accounts (stand-in RPC)", function () {
  this.timeout(30_000);
  let market: StandInMarket;
  let relayer: TestRelayer;
  let creator: Creator;
  let creatorSession: string;
  let payer: PublicKey;
  let apiKey: string;

  before(async () => {
    market = await StandInMarket.start();
    relayer = await startTestRelayer(market.env());
    creator = await market.register(relayer.services.config.networks.devnet!.marketplace_public_key);
    const listed = await relayer.app.inject({
      method: "POST",
      url: "/v1/agents",
      headers: bearer((creatorSession = await signIn(relayer.app, creator.wallet))),
      payload: {
        agent: creator.agent.toBase58(),
        ...LISTING_DOC,
        endpoint: creator.endpoint,
        signing_key: new PublicKey(creator.terms.signingKey).toBase58(),
        pricing: PRICE_WIRE,
      },
    });
    assert.equal(listed.statusCode, 201, listed.body);
    const wallet = Keypair.generate();
    payer = wallet.publicKey;
    const key = await relayer.app.inject({
      method: "POST",
      url: "/v1/keys",
      headers: bearer(await signIn(relayer.app, wallet)),
      payload: { name: "quotes", environment: "test" },
    });
    assert.equal(key.statusCode, 201, key.body);
    apiKey = (key.json() as { secret: string }).secret;
  });

  after(async () => {
    await creator?.close();
    await relayer?.close();
    await market?.close();
  });

  const execute = (payload: Record<string, unknown> = { task: "echo", parameters: { text: "hi" } }) =>
    relayer.app.inject({ method: "POST", url: `/v1/agents/${creator.agent.toBase58()}/execute`, headers: bearer(apiKey), payload });

  /** Runs `call` and asserts it sent no transaction and reached no creator. */
  async function refusedQuietly(call: () => ReturnType<typeof execute>) {
    const asked = market.rpc.methods.length;
    const probed = creator.executions();
    const response = await call();
    const methods = market.rpc.methods.slice(asked);
    assert.ok(methods.every((method) => method.startsWith("get")), `reads only: ${methods.join(", ")}`);
    assert.equal(creator.executions(), probed, "the creator's service was not called");
    return response;
  }

  it("refuses a wallet without the USDC (insufficient_balance) or the allowance (insufficient_allowance), naming what to raise", async () => {
    market.fund(payer, PRICE_USDC - 1n, PRICE_USDC);
    const poor = await refusedQuietly(() => execute());
    assert.equal(poor.statusCode, 402);
    assert.equal(errorOf(poor).code, "insufficient_balance");

    const account = market.fund(payer, 10n * PRICE_USDC, PRICE_USDC - 1n);
    const short = await refusedQuietly(() => execute());
    assert.equal(short.statusCode, 402);
    const error = errorOf(short) as unknown as Record<string, string>;
    assert.equal(error.code, "insufficient_allowance");
    assert.deepEqual(
      [error.required_usdc, error.balance_usdc, error.allowance_usdc, error.token_account, error.delegate],
      ["0.250000", "2.500000", "0.249999", account.toBase58(), delegatePda(market.programId).toBase58()],
    );
  });

  it("refuses a call above the caller's max_price_usdc (409 price_above_maximum) and parameters outside the schema (400)", async () => {
    market.fund(payer, 10n * PRICE_USDC, 10n * PRICE_USDC);
    const dear = await refusedQuietly(() => execute({ task: "echo", parameters: { text: "hi" }, max_price_usdc: "0.249999" }));
    assert.equal(dear.statusCode, 409);
    assert.equal(errorOf(dear).code, "price_above_maximum");
    const wrong = await refusedQuietly(() => execute({ task: "echo", parameters: { text: 7 } }));
    assert.equal(wrong.statusCode, 400);
    assert.deepEqual([errorOf(wrong).code, errorOf(wrong).param], ["validation_failed", "parameters.text"]);
  });

  it("refuses (and pauses the listing) when the account's price is no longer the listing's: agent_terms_changed", async () => {
    market.fund(payer, 10n * PRICE_USDC, 10n * PRICE_USDC);
    await market.setAgent(creator.agent, { ...creator.terms, pricing: { kind: "PayPerUse", priceUsdc: 2n * PRICE_USDC } });
    try {
      const raised = await refusedQuietly(() => execute());
      assert.equal(raised.statusCode, 409);
      assert.equal(errorOf(raised).code, "agent_terms_changed");
      const listing = await relayer.app.inject({ method: "GET", url: `/v1/agents/${creator.agent.toBase58()}` });
      assert.equal((listing.json() as { status: string }).status, "paused");
      const paused = await refusedQuietly(() => execute());
      assert.equal(paused.statusCode, 409);
      assert.equal(errorOf(paused).code, "agent_unavailable");
    } finally {
      await market.setAgent(creator.agent, creator.terms);
      const resumed = await relayer.app.inject({ method: "POST", url: `/v1/agents/${creator.agent.toBase58()}/resume`, headers: bearer(creatorSession) });
      assert.equal(resumed.statusCode, 200, resumed.body);
    }
  });
});
