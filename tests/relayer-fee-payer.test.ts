// The relayer's own SOL: it pays every transaction fee and the rent of the escrows and receipts it
// opens. Receipts' rent comes back by close_receipt once their dispute window has passed.
import { strict as assert } from "node:assert";

import { closeReceiptInstruction, parseExecutionId, receiptPda } from "@agent-market/program";
import { RECEIPT_CLOSER_LOCK_CLASS } from "@agent-market/relayer";

import { DISPUTE_WINDOW_SECS, LAMPORTS_PER_SIGNATURE, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { startRelayer, type RunningRelayer } from "./src/relayer.js";

/** Longer than the relayer's sweep interval (2 s): a sweep has run in between. */
const ONE_SWEEP_MS = 2_500;

describe("relayer: its own SOL", function () {
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

  it("returns each settled receipt's rent to the relayer once its dispute window has passed", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 10_000_000n);
    const settled = [await executed(agent, payer), await executed(agent, payer), await executed(agent, payer)];
    agent.server.behaviour = "status_500";
    const refunded = await executed(agent, payer, 502);
    agent.server.behaviour = "echo";
    assert.deepEqual((await rows(settled)).map((row) => row.state), ["settled", "settled", "settled"]);
    assert.equal((await rows([refunded]))[0]!.state, "refunded");

    const receipts = settled.map((id) => receiptPda(parseExecutionId(id)!));
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
      const rent = await market.lamports(receiptPda(parseExecutionId(byOther)!));
      await market.send(
        [closeReceiptInstruction({ executionId: parseExecutionId(byOther)!, rentPayer: market.relayer.publicKey })],
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
    assert.equal(await market.exists(receiptPda(parseExecutionId(byRelayer)!)), false);
  });
});
