// What bounds the SOL a caller or a creator can make the relayer spend, on localnet with the
// relayer on PostgreSQL and creators as real HTTP servers: the in-flight limits per key and per
// agent (429 before anything is sent), and an agent's circuit breaker over the refunds its creator
// causes (503 before anything is sent, a probe after the cool-off). The relayer's SOL is read on
// chain: each refunded call costs it two fees (open_escrow, refund), a refused one nothing, and an
// agent whose batches outgrow a legacy transaction its lookup table, once.
import { strict as assert } from "node:assert";

import { PublicKey } from "@solana/web3.js";

import { LAMPORTS_PER_SIGNATURE, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, startRelayer, type ApiResponse, type RunningRelayer } from "./src/relayer.js";

const PRICE = 10_000n;

interface Circuit {
  state: string;
  opened_at: string | null;
  retry_at: string | null;
}

describe("relayer: in-flight limits and the circuit breaker", function () {
  this.timeout(300_000);
  let market: TestMarket;
  const agents: ListedAgent[] = [];
  const relayers: RunningRelayer[] = [];

  before(async () => {
    market = await TestMarket.start();
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    for (const relayer of relayers) await relayer.close();
    await market?.stop();
  });

  async function relayerWith(env: Record<string, string>): Promise<RunningRelayer> {
    const relayer = await startRelayer(market.localnet, env);
    relayers.push(relayer);
    return relayer;
  }

  async function listed(relayer: RunningRelayer): Promise<ListedAgent> {
    const agent = await listAgent(market, relayer, { pricing: { kind: "PayPerUse", priceUsdc: PRICE } });
    agents.push(agent);
    return agent;
  }

  async function escrowsOf(relayer: RunningRelayer, payer: Payer): Promise<number> {
    const { rows } = await relayer.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM executions WHERE api_key_id = $1", [
      payer.apiKeyId,
    ]);
    return rows[0]!.n;
  }

  const relayerSol = () => market.lamports(market.relayer.publicKey);

  describe("in-flight limits", () => {
    let relayer: RunningRelayer;
    let agent: ListedAgent;

    before(async () => {
      relayer = await relayerWith({ EXECUTIONS_IN_FLIGHT_PER_KEY: "2", EXECUTIONS_IN_FLIGHT_PER_AGENT: "3" });
      agent = await listed(relayer);
      // Each call holds its escrow open while the creator works.
      agent.server.behaviour = "slow";
      agent.server.delay_ms = 1_500;
    });

    it("a key at its limit (2) refuses the third concurrent call: 429 key_concurrency_limit, nothing sent; the leases come back when the calls end", async () => {
      const payer = await newPayer(market, relayer, 1_000_000n);
      const answers = await Promise.all([0, 1, 2].map(() => execute(relayer, payer, agent.address)));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, 200, 429], JSON.stringify(answers.map((a) => a.body)));
      const refused = answers.find((a) => a.status === 429)!;
      assert.equal(errorCode(refused), "key_concurrency_limit");
      assert.equal((refused.body as { error: { limit: number } }).error.limit, 2);
      assert.equal(refused.headers.get("retry-after"), "1");
      assert.equal(await escrowsOf(relayer, payer), 2, "the refused call opened no escrow");
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - 2n * PRICE);

      const { rows } = await relayer.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM execution_leases");
      assert.equal(rows[0]!.n, 0, "every lease was released");
      const next = await execute(relayer, payer, agent.address);
      assert.equal(next.status, 200, JSON.stringify(next.body));
    });

    it("an async execution holds its key's lease until its job has run it: the third is 429 key_concurrency_limit at once", async () => {
      const payer = await newPayer(market, relayer, 1_000_000n);
      const headers = { prefer: "respond-async" };
      const body = { task: "summarize this please", parameters: { language: "en" } };
      const answers = await Promise.all([0, 1, 2].map(() => execute(relayer, payer, agent.address, body, headers)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [202, 202, 429], JSON.stringify(answers.map((a) => a.body)));
      assert.equal(errorCode(answers.find((a) => a.status === 429)!), "key_concurrency_limit");
      // Once the jobs have run them, the key has room again.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { rows } = await relayer.services.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM executions WHERE api_key_id = $1 AND state IN ('settled', 'settling')",
          [payer.apiKeyId],
        );
        if (rows[0]!.n === 2) break;
        assert.ok(Date.now() < deadline, "the async executions settled");
        await sleep(100);
      }
      await sleep(200);
      const next = await execute(relayer, payer, agent.address);
      assert.equal(next.status, 200, JSON.stringify(next.body));
    });

    it("an agent at its limit (3) refuses the fourth concurrent call from other keys: 429 agent_concurrency_limit, nothing sent", async () => {
      const payers = [await newPayer(market, relayer, 1_000_000n), await newPayer(market, relayer, 1_000_000n)];
      const answers = await Promise.all([0, 1, 0, 1].map((i) => execute(relayer, payers[i]!, agent.address)));
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [200, 200, 200, 429],
        JSON.stringify(answers.map((a) => a.body)),
      );
      const refused = answers.find((a) => a.status === 429)!;
      assert.equal(errorCode(refused), "agent_concurrency_limit");
      assert.equal((refused.body as { error: { limit: number } }).error.limit, 3);
      const escrows = (await escrowsOf(relayer, payers[0]!)) + (await escrowsOf(relayer, payers[1]!));
      assert.equal(escrows, 3, "the refused call opened no escrow");
    });
  });

  describe("circuit breaker", () => {
    const FAILURES = 20;
    const COOLOFF_SECS = 6;
    const CALLERS = 10;
    let relayer: RunningRelayer;
    let agent: ListedAgent;
    let payer: Payer;

    before(async () => {
      relayer = await relayerWith({
        CIRCUIT_BREAKER_FAILURES: String(FAILURES),
        CIRCUIT_BREAKER_WINDOW_SECS: "60",
        CIRCUIT_BREAKER_COOLOFF_SECS: String(COOLOFF_SECS),
      });
      agent = await listed(relayer);
      payer = await newPayer(market, relayer, 10_000_000n);
    });

    const circuit = async () =>
      (await api<{ circuit: Circuit }>(relayer, "GET", `/v1/agents/${agent.address.toBase58()}`)).body.circuit;

    it(`200 calls to an agent that answers 500, from ${CALLERS} callers at once: at most ${FAILURES} + ${CALLERS} escrows, the rest 503 agent_circuit_open before anything is sent`, async () => {
      agent.server.behaviour = "status_500";
      const sol = await relayerSol();
      const usdc = await market.usdc(payer.tokenAccount);
      const answers: ApiResponse[] = [];
      await Promise.all(
        Array.from({ length: CALLERS }, async () => {
          for (let i = 0; i < 200 / CALLERS; i += 1) answers.push(await execute(relayer, payer, agent.address));
        }),
      );
      const shown = await circuit();
      assert.equal(shown.state, "open");
      assert.ok(shown.opened_at && shown.retry_at);
      const codes = answers.map((a) => errorCode(a));
      const refunded = codes.filter((c) => c === "creator_error").length;
      const open = codes.filter((c) => c === "agent_circuit_open").length;
      assert.equal(refunded + open, 200, `every call is one or the other: ${JSON.stringify([...new Set(codes)])}`);
      assert.ok(refunded >= FAILURES, `the circuit opened at the threshold, not before (${refunded})`);
      assert.ok(refunded <= FAILURES + CALLERS, `at most the threshold and the calls already in flight: ${refunded}`);
      const refusal = answers.find((a) => errorCode(a) === "agent_circuit_open")!;
      assert.equal(refusal.status, 503);
      assert.ok((refusal.body as { error: { retry_at: string } }).error.retry_at);
      assert.ok(Number(refusal.headers.get("retry-after")) >= 1);

      assert.equal(await escrowsOf(relayer, payer), refunded, "an escrow for each refunded call, none for a refused one");
      // Refunds confirm within moments; then the relayer has spent at most an open's and a
      // refund's fee per refunded call (escrows opened together, and refunds sent together, share
      // one), and at least one fee per refund transaction the answers name.
      await sleep(1_000);
      const spent = sol - (await relayerSol());
      const refundTransactions = new Set(
        answers
          .filter((a) => errorCode(a) === "creator_error")
          .map((a) => (a.body as { error: { refund_transaction: string } }).error.refund_transaction),
      );
      // The agent's lookup table, made once its batches outgrow a legacy transaction, is paid once: its rent and one fee.
      const { rows } = await relayer.services.db.query("SELECT address FROM lookup_tables WHERE agent = $1", [agent.address.toBase58()]);
      const table = rows[0] ? await market.connection.getAccountInfo(new PublicKey(rows[0].address as string), "confirmed") : null;
      const tableLamports = table ? BigInt(table.lamports) + LAMPORTS_PER_SIGNATURE : 0n;
      assert.ok(spent - tableLamports <= BigInt(refunded) * 2n * LAMPORTS_PER_SIGNATURE, `${spent} lamports, ${tableLamports} of them the table's`);
      assert.ok(spent > BigInt(refundTransactions.size) * LAMPORTS_PER_SIGNATURE, `${spent} lamports, ${refundTransactions.size} refund transactions`);
      assert.equal(await market.usdc(payer.tokenAccount), usdc, "every escrow was refunded");
    });

    it("after the cool-off one probe call decides: a creator-caused refund opens the circuit again, a settlement closes it", async () => {
      const { retry_at } = await circuit();
      if (retry_at) await sleep(Math.max(0, Date.parse(retry_at) - Date.now()) + 200);
      assert.equal((await circuit()).state, "half_open");
      const failedProbe = await execute(relayer, payer, agent.address);
      assert.equal(errorCode(failedProbe), "creator_error");
      assert.equal((await circuit()).state, "open", "the failed probe opened the circuit again");
      const refused = await execute(relayer, payer, agent.address);
      assert.equal(errorCode(refused), "agent_circuit_open");

      agent.server.behaviour = "echo";
      await sleep(COOLOFF_SECS * 1_000 + 200);
      const probe = await execute(relayer, payer, agent.address);
      assert.equal(probe.status, 200, JSON.stringify(probe.body));
      assert.deepEqual(await circuit(), { state: "closed", opened_at: null, retry_at: null });
      const next = await execute(relayer, payer, agent.address);
      assert.equal(next.status, 200, JSON.stringify(next.body));
    });

    it("only the creator's failures count: calls the payer could not pay (402, no escrow) leave the circuit closed", async () => {
      const poor = await newPayer(market, relayer, 1n);
      for (let i = 0; i < FAILURES + 1; i += 1) {
        const refused = await execute(relayer, poor, agent.address);
        assert.equal(errorCode(refused), "insufficient_balance");
      }
      assert.equal((await circuit()).state, "closed");
    });
  });
});
