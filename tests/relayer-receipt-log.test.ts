// Escrows opened and settled in batches (BATCH_OPENS=true) end to end:
// localnet, the relayer on PostgreSQL and Redis, creators as real HTTP servers. A lone call opens
// with its own open_escrow and settles at once by settle_batch under its own signature; a burst of
// one agent's calls opens by open_escrow_batch and settles in batches under one signature of the
// creator each; a burst of failed calls is refunded in shared transactions, one `refund` each;
// once batches outgrow a legacy transaction the relayer makes the agent's lookup table, and then
// batches are v0 transactions loading its fixed accounts;
// every amount is checked on chain to the unit, and the relayer's database agrees with the chain.
import { strict as assert } from "node:assert";

import { escrowPda, formatExecutionId, parseExecutionId, receiptLogPda, settledLeaves, splitPayment } from "@agent-market/program";

import { PublicKey } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, feeShardsTotal, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, expectReconciled, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;

interface Execution {
  id: string;
  status: string;
  transactions: { escrow: string | null; settlement: string | null; confirmation: string | null };
}

describe("relayer: settlement into the receipt log", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet, { BATCH_OPENS: "true" });
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    try {
      if (relayer) {
        await expectReconciled(relayer);
        await relayer.close();
      }
    } finally {
      await market?.stop();
    }
  });

  async function newAgent(sign_batch: boolean): Promise<ListedAgent> {
    const agent = await listAgent(market, relayer);
    agent.server.sign_batch = sign_batch;
    agents.push(agent);
    return agent;
  }

  /** The executions once confirmed, each read back from the relayer. */
  async function confirmed(payer: { apiKey: string }, ids: string[]): Promise<Execution[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const executions = await Promise.all(
        ids.map(async (id) => (await api<Execution>(relayer, "GET", `/v1/executions/${id}`, { token: payer.apiKey })).body),
      );
      if (executions.every((e) => e.transactions.confirmation === "confirmed")) return executions;
      if (Date.now() > deadline) throw new Error(`not confirmed: ${JSON.stringify(executions.map((e) => e.status))}`);
      await sleep(100);
    }
  }

  /** Runs `calls` executions of `agent` at once; checks each succeeded and the money moved exactly. */
  async function burst(agent: ListedAgent, calls: number): Promise<Execution[]> {
    const payer = await newPayer(market, relayer, PRICE * BigInt(calls));
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const feesBefore = await feeShardsTotal(market);
    const responses = await Promise.all(Array.from({ length: calls }, () => execute(relayer, payer, agent.address)));
    for (const response of responses) assert.equal(response.status, 200, JSON.stringify(response.body));
    const executions = await confirmed(
      payer,
      responses.map((r) => (r.body as unknown as Execution).id),
    );
    for (const execution of executions) assert.equal(execution.status, "succeeded");
    const { creatorShareUsdc, feeUsdc } = splitPayment(PRICE);
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + creatorShareUsdc * BigInt(calls), "99% of each call");
    assert.equal(await feeShardsTotal(market), feesBefore + feeUsdc * BigInt(calls), "1% of each call");
    assert.equal(await market.usdc(payer.tokenAccount), 0n, "each call charged once");
    for (const execution of executions) {
      assert.equal(await market.exists(escrowPda(parseExecutionId(execution.id)!, market.programId)), false, "the escrow closed, its rent back");
    }
    return executions;
  }

  /** The settle_batch transactions of `executions`, each with the executions it settled. */
  async function settlements(executions: Execution[]): Promise<Map<string, number>> {
    const by = new Map<string, number>();
    for (const e of executions) by.set(e.transactions.settlement!, (by.get(e.transactions.settlement!) ?? 0) + 1);
    for (const [signature, count] of by) {
      const events = await market.events(signature);
      assert.equal(settledLeaves(events).length, count, "one leaf per execution, in its batch's one event");
    }
    return by;
  }

  it("settles a lone call at once into the agent's receipt log, under its own signature: 99/1 exact", async () => {
    const agent = await newAgent(true);
    assert.equal(await market.exists(receiptLogPda(agent.address, market.programId)), true, "the creator paid the log at registration");
    const [execution] = await burst(agent, 1);
    const by = await settlements([execution!]);
    assert.equal(by.size, 1);
    assert.deepEqual(agent.server.batches_signed, [], "a batch of one needs no batch signature");
    const { rows } = await relayer.services.db.query("SELECT escrow_nonce, units FROM executions WHERE id = $1", [execution!.id]);
    assert.deepEqual([typeof rows[0].escrow_nonce, rows[0].units], ["string", "0"], "what the creator's v2 signature bound, kept");
  });

  it("settles a burst of one agent's calls in fewer transactions, each batch under one creator signature", async () => {
    const agent = await newAgent(true);
    const executions = await burst(agent, 24);
    const by = await settlements(executions);
    assert.ok(by.size < executions.length, `24 calls in ${by.size} settlements`);
    // 8 fit a legacy transaction, 12 a v0 one once the agent's lookup table exists.
    assert.ok(Math.max(...by.values()) <= 12, "no batch above what one transaction holds");
    assert.ok(agent.server.batches_signed.length > 0 && agent.server.batches_signed.every((n) => n > 1 && n <= 12));
    const opens = new Set(executions.map((e) => e.transactions.escrow!));
    assert.ok(opens.size < executions.length, `24 escrows opened in ${opens.size} transactions`);
    let fees_lamports = 0n;
    for (const signature of [...by.keys(), ...opens]) fees_lamports += await market.fee(signature);
    console.log(
      `      24 calls: ${opens.size} open and ${by.size} settle_batch transactions, ${fees_lamports / 24n} lamports of fees per call`,
    );
  });

  it("once the agent's lookup table can be loaded from, its batches are v0 transactions that load the fixed accounts from it", async () => {
    const agent = await newAgent(true);
    await burst(agent, 1);
    const tables = async () =>
      (await relayer.services.db.query("SELECT count(*)::int AS tables FROM lookup_tables WHERE agent = $1", [agent.address.toBase58()])).rows[0].tables;
    assert.equal(await tables(), 0, "a lone call's transactions fit legacy ones: no table, no rent");
    await burst(agent, 24); // batches that outgrow a legacy transaction: the relayer creates the table meanwhile
    const table = await lookupTableOf(agent);
    const executions = await burst(agent, 24);
    const transactions = new Set(executions.flatMap((e) => [e.transactions.escrow!, e.transactions.settlement!]));
    let loading = 0;
    for (const signature of transactions) {
      const tx = await market.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
      assert.ok(tx, `transaction ${signature}`);
      if (tx.version !== 0) continue;
      loading++;
      const lookups = tx.transaction.message.addressTableLookups;
      assert.deepEqual(lookups.map((lookup) => lookup.accountKey.toBase58()), [table], "loaded from the agent's table only");
      const loaded = [...tx.meta!.loadedAddresses!.writable, ...tx.meta!.loadedAddresses!.readonly].map((key) => key.toBase58());
      assert.ok(loaded.includes(agent.address.toBase58()), "the agent's account among what it loaded");
    }
    // Lone opens (a call's own open_escrow, recorded with its row) stay legacy; every batch loads.
    assert.ok(loading >= 2, `${loading} of ${transactions.size} transactions loaded from the table`);
    assert.equal(await tables(), 1, "one table per agent");
  });

  /** The address of the agent's lookup table, once the relayer has created it and it can be loaded from. */
  async function lookupTableOf(agent: ListedAgent): Promise<string> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await relayer.services.db.query("SELECT address FROM lookup_tables WHERE agent = $1", [agent.address.toBase58()]);
      const address = rows[0]?.address as string | undefined;
      if (address && (await market.connection.getAccountInfo(new PublicKey(address), "confirmed"))) {
        await sleep(500); // a few slots: its addresses are loaded from the slot after they were added
        return address;
      }
      if (Date.now() > deadline) throw new Error("the relayer did not create the agent's lookup table");
      await sleep(100);
    }
  }

  it("refunds a burst of one agent's failed calls in fewer transactions: each escrow refunded whole, with its own reason and event", async () => {
    const agent = await newAgent(true);
    agent.server.behaviour = "status_500";
    const calls = 12;
    const payer = await newPayer(market, relayer, PRICE * BigInt(calls));
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const feesBefore = await feeShardsTotal(market);
    const responses = await Promise.all(Array.from({ length: calls }, () => execute(relayer, payer, agent.address)));
    const refunds = new Map<string, string[]>();
    for (const response of responses) {
      assert.equal(response.status, 502, JSON.stringify(response.body));
      const error = (response.body as { error: { code: string; execution_id: string; refund_transaction: string; execution: Execution & { failure?: { refund_reason: string } } } }).error;
      assert.equal(error.code, "creator_error");
      assert.equal(error.execution.failure?.refund_reason, "CreatorError");
      refunds.set(error.refund_transaction, [...(refunds.get(error.refund_transaction) ?? []), error.execution_id]);
    }
    assert.ok(refunds.size < calls, `${calls} refunds in ${refunds.size} transactions`);
    let fees_lamports = 0n;
    for (const [signature, ids] of refunds) {
      await market.waitForConfirmed(signature);
      const refunded = (await market.events(signature)).flatMap((event) => (event.name === "EscrowRefunded" ? [event.data] : []));
      assert.deepEqual(
        refunded.map((event) => formatExecutionId(event.executionId)).sort(),
        [...ids].sort(),
        "one EscrowRefunded per execution, each in the transaction its execution names",
      );
      for (const event of refunded) assert.equal(event.reason, "CreatorError");
      fees_lamports += await market.fee(signature);
    }
    assert.equal(await market.usdc(payer.tokenAccount), PRICE * BigInt(calls), "every payer's escrow came back whole");
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore, "the creator got nothing");
    assert.equal(await feeShardsTotal(market), feesBefore, "no fee on a refund");
    for (const id of responses.map((r) => (r.body as { error: { execution_id: string } }).error.execution_id)) {
      assert.equal(await market.exists(escrowPda(parseExecutionId(id)!, market.programId)), false, "each escrow closed");
    }
    console.log(`      ${calls} refunds: ${refunds.size} transactions, ${fees_lamports / BigInt(calls)} lamports of refund fees per call`);
  });

  it("settles each call alone, a batch of one under its own signature, when the creator has no /sign-batch", async () => {
    const agent = await newAgent(false);
    await burst(agent, 1);
    const executions = await burst(agent, 8);
    const by = await settlements(executions);
    assert.equal(by.size, executions.length, "one settle_batch per call");
    assert.deepEqual(agent.server.batches_signed, []);
  });
});
