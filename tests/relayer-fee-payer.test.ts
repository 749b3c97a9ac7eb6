// The relayer's own SOL: it pays every transaction fee and the rent of the escrows and receipts it
// opens. Receipts' rent comes back by close_receipt once their dispute window has passed; and a
// relayer whose SOL runs short answers a clear 503 and charges nothing.
import { strict as assert } from "node:assert";

import { closeReceiptInstruction, escrowPda, parseExecutionId, receiptPda, splitPayment, subscriptionPda } from "@agent-market/program";
import { RECEIPT_CLOSER_LOCK_CLASS } from "@agent-market/relayer";
import { Keypair, LAMPORTS_PER_SOL, SystemProgram } from "@solana/web3.js";

import { DISPUTE_WINDOW_SECS, LAMPORTS_PER_SIGNATURE, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, ONE_BY_ONE, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;
/** Longer than the relayer's sweep interval (2 s): a sweep has run in between. */
const ONE_SWEEP_MS = 2_500;
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
    receipt_close_signature: string | null;
    receipt_closed_at: Date | null;
  }

  async function rows(ids: string[]): Promise<Row[]> {
    const { rows } = await relayer.services.db.query<Row & { id: string }>(
      "SELECT id, state, receipt_close_signature, receipt_closed_at FROM executions WHERE id = ANY($1::text[])",
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

  it("returns each settled receipt's rent to the relayer once its dispute window has passed", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const settled = [await executed(agent, payer), await executed(agent, payer), await executed(agent, payer)];
    agent.server.behaviour = "status_500";
    const refunded = await executed(agent, payer, 502);
    agent.server.behaviour = "echo";
    assert.deepEqual((await rows(settled)).map((row) => row.state), ["settled", "settled", "settled"]);
    assert.equal((await rows([refunded]))[0]!.state, "refunded");

    const receipts = settled.map((id) => receiptPda(parseExecutionId(id)!, market.programId));
    const rents = await Promise.all(receipts.map((receipt) => market.lamports(receipt)));
    assert.ok(rents.every((rent) => rent > 0n), "settle opened a receipt, paid by the relayer");
    const before = await relayerLamports();

    // Within the window the receipts are the arbiter's evidence: a sweep leaves them alone.
    await sleep(ONE_SWEEP_MS);
    for (const receipt of receipts) assert.equal(await market.exists(receipt), true);
    assert.deepEqual((await rows(settled)).map((row) => row.receipt_close_signature), [null, null, null]);

    await market.localnet.advanceClock({ seconds: DISPUTE_WINDOW_SECS + 1 });
    await waitUntil("the receipts are marked closed", async () => (await rows(settled)).every((row) => row.receipt_closed_at !== null));
    for (const receipt of receipts) assert.equal(await market.exists(receipt), false);

    const signatures = [...new Set((await rows(settled)).map((row) => row.receipt_close_signature))];
    assert.ok(signatures.every((signature) => signature !== null));
    const closedEvents = [];
    for (const signature of signatures as string[]) {
      await market.waitForConfirmed(signature);
      closedEvents.push(...(await market.events(signature)).filter((event) => event.name === "ReceiptClosed"));
    }
    assert.equal(closedEvents.length, 3, "one ReceiptClosed per receipt");
    const fees = BigInt(signatures.length) * LAMPORTS_PER_SIGNATURE;
    assert.equal(await relayerLamports(), before + rents.reduce((a, b) => a + b, 0n) - fees, "the rent came back, less the fees");

    // A refund opens no receipt: there is nothing to close.
    const [refundRow] = await rows([refunded]);
    assert.equal(refundRow!.receipt_close_signature, null);
    assert.equal(refundRow!.receipt_closed_at, null);
  });

  it("closes receipts from one instance at a time, and only marks those someone else closed", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const [byOther, byRelayer] = [await executed(agent, payer), await executed(agent, payer)];

    // Another instance at work holds the lock: this one closes nothing meanwhile.
    const holder = await relayer.services.db.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1, hashtext('devnet'))", [RECEIPT_CLOSER_LOCK_CLASS]);
      await market.localnet.advanceClock({ seconds: DISPUTE_WINDOW_SECS + 1 });
      await sleep(ONE_SWEEP_MS);
      assert.deepEqual((await rows([byOther, byRelayer])).map((row) => row.receipt_close_signature), [null, null]);

      // close_receipt is open to anyone; the rent still goes to the relayer that paid it.
      const relayerBefore = await relayerLamports();
      const rent = await market.lamports(receiptPda(parseExecutionId(byOther)!, market.programId));
      await market.send(
        [closeReceiptInstruction({ programId: market.programId, executionId: parseExecutionId(byOther)!, rentPayer: market.relayer.publicKey })],
        [payer.wallet],
      );
      assert.equal(await relayerLamports(), relayerBefore + rent);
    } finally {
      await holder.query("SELECT pg_advisory_unlock($1, hashtext('devnet'))", [RECEIPT_CLOSER_LOCK_CLASS]);
      holder.release();
    }

    await waitUntil("both receipts are marked closed", async () =>
      (await rows([byOther, byRelayer])).every((row) => row.receipt_closed_at !== null),
    );
    const [other, own] = await rows([byOther, byRelayer]);
    assert.equal(other!.receipt_close_signature, null, "no transaction for a receipt already gone");
    assert.notEqual(own!.receipt_close_signature, null);
    assert.equal(await market.exists(receiptPda(parseExecutionId(byRelayer)!, market.programId)), false);
  });

  it("reconciles a receipt marked closed against the chain", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const id = await executed(agent, payer);
    const differences = async () =>
      (await relayer.services.reconcile("devnet")).differences.filter((difference) => difference.execution === id);
    assert.deepEqual(await differences(), []);
    // The database says closed while the chain still holds the receipt (its window is open).
    await relayer.services.db.query("UPDATE executions SET receipt_closed_at = clock_timestamp() WHERE id = $1", [id]);
    try {
      assert.deepEqual(await differences(), [
        { execution: id, problem: "its receipt is marked closed in the database, but is still open" },
      ]);
    } finally {
      await relayer.services.db.query("UPDATE executions SET receipt_closed_at = NULL WHERE id = $1", [id]);
    }
  });

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

  it("keeps a settle the relayer could not pay for, and settles it once the relayer has SOL again", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    agent.server.behaviour = "slow";
    agent.server.delay_ms = 1_000;
    const probes = agent.server.received.length;
    const answer = execute(relayer, payer, agent.address);
    await waitUntil("the creator is called", async () => agent.server.received.length > probes);
    // The escrow is open; its receipt's rent is what the settle will lack.
    await drainRelayer(DRAINED_LAMPORTS);
    let id: string;
    try {
      const response = await answer;
      assert.equal(response.status, 200, JSON.stringify(response.body));
      id = response.body.id as string;
      await sleep(ONE_SWEEP_MS);
      assert.equal((await rows([id]))[0]!.state, "settling", "the settle waits; it is not turned into a refund");
    } finally {
      await refillRelayer();
    }
    await waitUntil("the execution is settled", async () => (await rows([id]))[0]!.state === "settled");
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + splitPayment(PRICE).creatorShareUsdc);
    assert.equal(await market.usdc(payer.tokenAccount), 10_000_000n - PRICE);
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
