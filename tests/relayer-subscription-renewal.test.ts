// Renewing a subscription whose account already exists: the purchase stays pending until its own
// transaction is confirmed (the account alone proves nothing: it held the previous period), a lost
// send is sent again, one that never lands fails once its blockhash expires with nothing charged
// and its spending-cap reservation released, and a pending renewal survives a relayer restart.
// Sends are lost with `localnet_dropTransaction` (tests/src/rpc-proxy.ts, fault "drop"): the
// node accepted and ran the transaction, then took it back as a cluster abandons a fork.
import { strict as assert } from "node:assert";

import { decodeSubscription, subscriptionPda } from "@agent-market/program";
import type { PublicKey } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, relayerEnv, startRelayerWith, type ApiResponse, type RunningRelayer } from "./src/relayer.js";
import { startRpcProxy, type RpcProxy } from "./src/rpc-proxy.js";

const PERIOD_PRICE = 300_000n;
const PERIOD_SECS = 3600;
const FUNDS = 5_000_000n;

interface Purchase {
  id: string;
  status: string;
  expires_at: string | null;
  transaction: string;
}

interface Stack {
  market: TestMarket;
  proxy: RpcProxy;
  relayer: RunningRelayer;
  env: Record<string, string>;
  plan: ListedAgent;
}

async function startStack(options: { slotMs?: number; env?: Record<string, string>; keepDatabase?: boolean } = {}): Promise<Stack> {
  const market = await TestMarket.start(options.slotMs === undefined ? {} : { slotMs: options.slotMs });
  const proxy = await startRpcProxy(market.localnet.rpcUrl);
  const env = await relayerEnv(market.localnet, { DEVNET_RPC_URL: proxy.url, ...options.env });
  const relayer = await startRelayerWith(env, { dropDatabase: !options.keepDatabase });
  const plan = await listAgent(market, relayer, { pricing: { kind: "Subscription", periodPriceUsdc: PERIOD_PRICE, periodSecs: PERIOD_SECS } });
  return { market, proxy, relayer, env, plan };
}

async function stopStack(stack: Stack | undefined): Promise<void> {
  if (!stack) return;
  await stack.plan.server.close();
  try {
    await stack.relayer.close();
    await stack.proxy.close();
  } finally {
    await stack.market.stop();
  }
}

const subscribe = (relayer: RunningRelayer, payer: Payer, plan: ListedAgent, key: string) =>
  api<Purchase>(relayer, "POST", `/v1/agents/${plan.address.toBase58()}/subscription`, {
    token: payer.apiKey,
    headers: { "idempotency-key": key },
  });

/** Replays the purchase (same Idempotency-Key) until it is no longer pending. */
async function settled(relayer: RunningRelayer, payer: Payer, plan: ListedAgent, key: string, timeout_ms = 40_000): Promise<ApiResponse<Purchase>> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const replay = await subscribe(relayer, payer, plan, key);
    if (replay.body.status !== "pending") return replay;
    assert.ok(Date.now() < deadline, `still pending: ${JSON.stringify(replay.body)}`);
    await sleep(200);
  }
}

async function expiryOnChain(market: TestMarket, plan: PublicKey, wallet: PublicKey): Promise<string> {
  const info = await market.localnet.connection().getAccountInfo(subscriptionPda(plan, wallet, market.programId), "confirmed");
  return new Date(Number(decodeSubscription(info!.data).expiresAt) * 1000).toISOString();
}

async function spent(relayer: RunningRelayer, payer: Payer): Promise<string> {
  return (await api<{ spent_usdc: string }>(relayer, "GET", `/v1/keys/${payer.apiKeyId}`, { token: payer.token })).body.spent_usdc;
}

const plusPeriod = (iso: string) => new Date(Date.parse(iso) + PERIOD_SECS * 1000).toISOString();

describe("relayer: renewing a subscription", function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  afterEach(() => stack?.proxy.clear());
  after(() => stopStack(stack));

  it("stays pending until its own transaction is confirmed: a lost send is sent again, and the expiry moves by one period", async () => {
    const { market, proxy, relayer, plan } = stack;
    const payer = await newPayer(market, relayer, FUNDS);
    const creatorBefore = await market.usdc(plan.creator.tokenAccount);
    const first = await subscribe(relayer, payer, plan, "first");
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.expires_at, await expiryOnChain(market, plan.address, payer.wallet.publicKey));

    const rule = proxy.fail("sendTransaction", "drop");
    const renewal = await subscribe(relayer, payer, plan, "renew");
    assert.equal(rule.hits, 1, "the renewal's first send was lost");
    const final = renewal.body.status === "pending" ? await settled(relayer, payer, plan, "renew") : renewal;
    assert.equal(final.status, 200, JSON.stringify(final.body));
    assert.equal(final.body.status, "succeeded");
    assert.equal(final.body.expires_at, plusPeriod(first.body.expires_at!), "the renewed period, not the one before it");
    assert.equal(final.body.expires_at, await expiryOnChain(market, plan.address, payer.wallet.publicKey));
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS - 2n * PERIOD_PRICE, "two periods paid, each once");
    assert.equal(await market.usdc(plan.creator.tokenAccount) - creatorBefore, (2n * PERIOD_PRICE * 99n) / 100n);
    assert.equal(await spent(relayer, payer), "0.600000");
  });

  it("renews back to back: the renewal is its own transaction (never a replay of the purchase before it), each period paid once", async () => {
    const { market, relayer, plan } = stack;
    const payer = await newPayer(market, relayer, FUNDS);
    const purchases: Purchase[] = [];
    // Within the relayer's shared blockhash: the same message but for the fee shard. The program
    // sells at most one period ahead, so a purchase and one renewal are what a wallet can buy.
    for (let i = 0; i < 2; i += 1) {
      const bought = await subscribe(relayer, payer, plan, `back-to-back-${i}`);
      assert.equal(bought.status, 200, JSON.stringify(bought.body));
      purchases.push(bought.body);
    }
    assert.notEqual(purchases[0]!.transaction, purchases[1]!.transaction, "two transactions");
    assert.equal(purchases[1]!.expires_at, plusPeriod(purchases[0]!.expires_at!));
    assert.equal(purchases[1]!.expires_at, await expiryOnChain(market, plan.address, payer.wallet.publicKey));
    const third = await subscribe(relayer, payer, plan, "back-to-back-2");
    assert.equal(third.status, 409, JSON.stringify(third.body));
    assert.equal((third.body as unknown as { error: { code: string } }).error.code, "subscription_not_renewable");
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS - 2n * PERIOD_PRICE);
  });

  it("fails a renewal none of whose sends lands once its blockhash expires: 503 chain_unavailable, nothing charged, the cap's reservation released", async () => {
    const { market, proxy, relayer, plan } = stack;
    const payer = await newPayer(market, relayer, FUNDS, FUNDS, { spending_cap_usdc: "1.000000" });
    const first = await subscribe(relayer, payer, plan, "first");
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(await spent(relayer, payer), "0.300000");
    const balance = await market.usdc(payer.tokenAccount);

    const rule = proxy.fail("sendTransaction", "drop", { times: 1_000 });
    const renewal = await subscribe(relayer, payer, plan, "renew-lost");
    assert.notEqual(renewal.body.status, "succeeded", JSON.stringify(renewal.body));
    const final = renewal.status === 202 ? await settled(relayer, payer, plan, "renew-lost") : renewal;
    assert.equal(final.status, 503, JSON.stringify(final.body));
    assert.equal(errorCode(final as never), "chain_unavailable");
    assert.ok(rule.hits >= 2, `the renewal was sent again (${rule.hits} sends)`);
    assert.equal(await market.usdc(payer.tokenAccount), balance, "nothing charged");
    assert.equal(await expiryOnChain(market, plan.address, payer.wallet.publicKey), first.body.expires_at, "the subscription is as it was");
    assert.equal(await spent(relayer, payer), "0.300000", "the renewal's reservation is released");
    proxy.clear();
    // The cap counts what was paid only: a renewal within it goes through.
    const again = await subscribe(relayer, payer, plan, "renew-again");
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.expires_at, plusPeriod(first.body.expires_at!));
    assert.equal(await spent(relayer, payer), "0.600000");
  });
});

describe("relayer: a pending renewal across a relayer restart (in-process job queue)", function () {
  this.timeout(180_000);
  let stack: Stack;

  // 400 ms slots: a blockhash lives a minute, so the renewal is still pending when the relayer is back.
  before(async () => {
    stack = await startStack({ slotMs: 400, env: { REDIS_URL: "" }, keepDatabase: true });
  });
  after(() => stopStack(stack));

  it("is finished by the restarted relayer: sent again, succeeded once confirmed, paid once", async () => {
    const { market, proxy, plan } = stack;
    const payer = await newPayer(market, stack.relayer, FUNDS);
    const first = await subscribe(stack.relayer, payer, plan, "first");
    assert.equal(first.status, 200, JSON.stringify(first.body));

    proxy.fail("sendTransaction", "drop", { times: 1_000 });
    const renewal = await subscribe(stack.relayer, payer, plan, "renew");
    assert.equal(renewal.status, 202, JSON.stringify(renewal.body));
    assert.equal(renewal.body.status, "pending");
    await stack.relayer.close();
    proxy.clear();
    stack.relayer = await startRelayerWith(stack.env, { dropDatabase: true });

    const final = await settled(stack.relayer, payer, plan, "renew", 60_000);
    assert.equal(final.status, 200, JSON.stringify(final.body));
    assert.equal(final.body.id, renewal.body.id);
    assert.equal(final.body.transaction, renewal.body.transaction, "the recorded transaction, sent again");
    assert.equal(final.body.expires_at, plusPeriod(first.body.expires_at!));
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS - 2n * PERIOD_PRICE, "paid once per period");
  });
});
