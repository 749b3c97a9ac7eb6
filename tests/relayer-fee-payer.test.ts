// The relayer's own SOL: it pays every transaction fee, the rent of the escrows it opens (back when
// they close) and once per agent its receipt log's; a settlement, a leaf of that log, holds no
// rent. A relayer whose SOL runs short answers a clear 503 and charges nothing.
import { strict as assert } from "node:assert";

import { escrowPda, parseExecutionId, splitPayment, subscriptionPda } from "@agent-market/program";
import { Keypair, LAMPORTS_PER_SOL, SystemProgram } from "@solana/web3.js";

import { LAMPORTS_PER_SIGNATURE, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, ONE_BY_ONE, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;
/** What a drained relayer keeps: above its own rent exemption, below any account's rent it pays. */
const DRAINED_LAMPORTS = 1_000_000n;

describe("relayer: its own SOL", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet, ONE_BY_ONE);
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    try {
      if (relayer) {
        const report = await relayer.services.reconcile("devnet");
        assert.deepEqual(report.differences, [], "reconciliation finds no difference");
        await relayer.close();
      }
    } finally {
      await market?.stop();
    }
  });

  async function newAgent(): Promise<ListedAgent> {
    const agent = await listAgent(market, relayer);
    agents.push(agent);
    return agent;
  }

  interface Row {
    state: string;
  }

  async function rows(ids: string[]): Promise<Row[]> {
    const { rows } = await relayer.services.db.query<Row & { id: string }>(
      "SELECT id, state FROM executions WHERE id = ANY($1::text[])",
      [ids],
    );
    return ids.map((id) => rows.find((row) => row.id === id)!);
  }

  async function waitUntil(what: string, done: () => Promise<boolean>, timeout_ms = 20_000): Promise<void> {
    const deadline = Date.now() + timeout_ms;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(100);
    }
  }

  /** Executes once and waits until the execution is final on chain; returns its id. */
  async function executed(agent: ListedAgent, payer: { apiKey: string }, expected_status = 200): Promise<string> {
    const response = await execute(relayer, payer, agent.address);
    assert.equal(response.status, expected_status, JSON.stringify(response.body));
    const id = (response.body.id ?? (response.body.error as { execution_id: string }).execution_id) as string;
    await waitUntil(`${id} is final`, async () => ["settled", "refunded"].includes((await rows([id]))[0]!.state));
    return id;
  }

  const relayerLamports = () => market.lamports(market.relayer.publicKey);

  /** Sends all but `keep` of the relayer's SOL away, as a relayer that ran dry. */
  async function drainRelayer(keep: bigint): Promise<void> {
    const lamports = (await relayerLamports()) - keep - LAMPORTS_PER_SIGNATURE;
    const sink = Keypair.generate().publicKey;
    await market.send([SystemProgram.transfer({ fromPubkey: market.relayer.publicKey, toPubkey: sink, lamports })], [market.relayer]);
    assert.equal(await relayerLamports(), keep);
  }

  async function refillRelayer(): Promise<void> {
    const latest = await market.connection.getLatestBlockhash();
    const signature = await market.connection.requestAirdrop(market.relayer.publicKey, 100 * LAMPORTS_PER_SOL);
    await market.connection.confirmTransaction({ signature, ...latest });
  }

  it("answers 503 relayer_underfunded and charges nothing when the relayer cannot pay an escrow's rent", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const countBefore = await executionCount(payer.apiKeyId);
    const key = { "idempotency-key": `underfunded-${Date.now()}` };
    const body = { task: "summarize this please", parameters: { language: "en" } };
    let failed: string;
    assert.equal((await health()).status, "ok");
    await drainRelayer(DRAINED_LAMPORTS);
    try {
      // GET /v1/health tells the operator before any call fails.
      const drained = await health();
      assert.equal(drained.status, "degraded");
      assert.deepEqual(drained.networks, [
        {
          name: "devnet",
          status: "low_balance",
          relayer: market.relayer.publicKey.toBase58(),
          relayer_balance_sol: "0.001000000",
          minimum_balance_sol: "1.000000000",
        },
      ]);
      const response = await execute(relayer, payer, agent.address, body, key);
      assert.equal(response.status, 503, JSON.stringify(response.body));
      assert.equal(errorCode(response), "relayer_underfunded");
      failed = (response.body.error as { execution_id: string }).execution_id;
      assert.equal(await market.exists(escrowPda(parseExecutionId(failed)!, market.programId)), false, "no escrow opened");
      assert.equal((await rows([failed]))[0]!.state, "failed");
      assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n, "nothing was charged");
      assert.equal(await executionCount(payer.apiKeyId), countBefore, "a call that charged nothing is not counted");
      assert.equal(await relayerLamports(), DRAINED_LAMPORTS, "a refused transaction costs no fee");
      const alarm = relayer.logs.map((line) => JSON.parse(line)).find((entry) => entry.execution_id === failed);
      assert.deepEqual([alarm?.level, alarm?.code], [50, "relayer_underfunded"], "logged at error level for the operator");
    } finally {
      await refillRelayer();
    }
    assert.equal((await health()).status, "ok");
    // The 503 invites a retry with the same key: it runs anew rather than replaying the failure.
    const retried = await execute(relayer, payer, agent.address, body, key);
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.notEqual(retried.body.id, failed);
    assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n - PRICE);
  });

  it("answers 503 relayer_underfunded to a subscription the relayer cannot pay the rent of, and charges nothing", async () => {
    const monthly = await listAgent(market, relayer, { pricing: { kind: "Subscription", periodPriceUsdc: 1_000_000n, periodSecs: 3600 } });
    agents.push(monthly);
    const payer = await newPayer(market, relayer, 2_000_000n);
    const subscribe = () => api(relayer, "POST", `/v1/agents/${monthly.address.toBase58()}/subscription`, { token: payer.apiKey });
    await drainRelayer(DRAINED_LAMPORTS);
    try {
      const refused = await subscribe();
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(errorCode(refused), "relayer_underfunded");
      assert.equal(await market.exists(subscriptionPda(monthly.address, payer.wallet.publicKey, market.programId)), false);
      assert.equal(await market.usdc(payer.tokenAccount), 2_000_000n, "nothing was charged");
    } finally {
      await refillRelayer();
    }
    const subscribed = await subscribe();
    assert.equal(subscribed.status, 200, JSON.stringify(subscribed.body));
    assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
  });

  it("settles with the relayer down to its last 0.001 SOL: a settlement holds no rent, only its fee", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    // The agent's first settlement creates its receipt log (its rent, once per agent).
    await executed(agent, payer);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    agent.server.behaviour = "slow";
    agent.server.delay_ms = 1_000;
    const probes = agent.server.received.length;
    const answer = execute(relayer, payer, agent.address);
    await waitUntil("the creator is called", async () => agent.server.received.length > probes);
    // The escrow is open; the settlement needs no rent, only its fee.
    await drainRelayer(DRAINED_LAMPORTS);
    try {
      const response = await answer;
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const id = response.body.id as string;
      await waitUntil("the execution is settled", async () => (await rows([id]))[0]!.state === "settled");
    } finally {
      await refillRelayer();
    }
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + splitPayment(PRICE).creatorShareUsdc);
    assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n - 2n * PRICE);
  });

  /** GET /v1/health's body, after checking that its status code agrees with it. */
  async function health(): Promise<{ status: string; networks: Record<string, string>[] }> {
    const response = await api<{ status: string; networks: Record<string, string>[] }>(relayer, "GET", "/v1/health");
    assert.equal(response.status, response.body.status === "ok" ? 200 : 503, JSON.stringify(response.body));
    return response.body;
  }

  async function executionCount(api_key_id: string): Promise<number> {
    const { rows } = await relayer.services.db.query<{ execution_count: string }>(
      "SELECT execution_count FROM api_keys WHERE id = $1",
      [api_key_id],
    );
    return Number(rows[0]!.execution_count);
  }
});
