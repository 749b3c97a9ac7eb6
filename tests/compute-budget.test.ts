// Every transaction asks for the compute it needs (issue 44): localnet meters the program as a
// cluster would (docs/localnet.md, "Metering") and refuses a transaction past its limit, so a
// paid execution's transactions carry a unit limit the meter's charge stays within, and the
// largest batched open, which the default 200,000 units cannot hold, lands under the limit
// `withComputeBudget` sizes for it.
import { strict as assert } from "node:assert";

import { MAX_OPEN_BATCH, computeUnitLimit, openEscrowBatchInstruction, withComputeBudget } from "@agent-market/program";
import { ComputeBudgetProgram, type TransactionInstruction } from "@solana/web3.js";

import { NO_MAXIMUM_USDC, randomId, TestMarket, USDC } from "./src/fixtures.js";
import { execute, listAgent, newPayer } from "./src/marketplace.js";
import { startRelayer, type RunningRelayer } from "./src/relayer.js";

/** The unit limit a landed transaction asked for, and the units the meter charged it. */
async function budgetOf(market: TestMarket, signature: string): Promise<{ limit: number; consumed: number }> {
  await market.waitForConfirmed(signature);
  const tx = await market.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
  assert.ok(tx?.meta, `transaction ${signature} is found`);
  const message = tx.transaction.message;
  const keys = message.getAccountKeys({ accountKeysFromLookups: tx.meta.loadedAddresses });
  const limits = message.compiledInstructions
    .filter((instruction) => keys.get(instruction.programIdIndex)?.equals(ComputeBudgetProgram.programId))
    .map((instruction) => Buffer.from(instruction.data))
    // Instruction 2 of the compute budget program, SetComputeUnitLimit: a u32.
    .filter((data) => data[0] === 2)
    .map((data) => data.readUInt32LE(1));
  assert.equal(limits.length, 1, `transaction ${signature} sets its unit limit once`);
  assert.equal(typeof tx.meta.computeUnitsConsumed, "number", "getTransaction reports the metered units");
  return { limit: limits[0]!, consumed: tx.meta.computeUnitsConsumed! };
}

describe("compute budget", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer | undefined;

  before(async () => {
    market = await TestMarket.start();
  });
  after(async () => {
    await relayer?.close();
    await market?.stop();
  });

  it("a batched open of MAX_OPEN_BATCH escrows passes the default 200,000 units and lands under the limit the SDK asks for", async () => {
    const agent = await market.agent();
    const payer = await market.payer(100n * USDC);
    const batch = (): TransactionInstruction =>
      openEscrowBatchInstruction({
        programId: market.programId,
        relayer: market.relayer.publicKey,
        usdcMint: market.usdcMint,
        agent: agent.address,
        items: Array.from({ length: MAX_OPEN_BATCH }, () => ({
          executionId: randomId(),
          apiKeyId: new Uint8Array(16),
          requestHash: new Uint8Array(32).fill(4),
          maxAmountUsdc: NO_MAXIMUM_USDC,
          payer: payer.wallet.publicKey,
          payerTokenAccount: payer.tokenAccount,
        })),
      });
    const before = await market.usdc(payer.tokenAccount);
    await assert.rejects(market.send([batch()], [market.relayer]), /exceeded CUs meter|ComputationalBudgetExceeded|computational budget/i);
    assert.equal(await market.usdc(payer.tokenAccount), before, "the refused batch moved nothing");

    const budgeted = withComputeBudget([batch()], market.programId);
    const signature = await market.send(budgeted, [market.relayer]);
    const { limit, consumed } = await budgetOf(market, signature);
    assert.equal(limit, computeUnitLimit([batch()], market.programId));
    assert.ok(limit > 200_000, `the batch asks for more than the default: ${limit}`);
    assert.ok(consumed <= limit, `metered ${consumed} within the limit ${limit}`);
    assert.equal(await market.usdc(payer.tokenAccount), before - BigInt(MAX_OPEN_BATCH) * 250_000n);
  });

  it("every transaction of a paid execution asks for its units and the meter's charge stays within them", async () => {
    relayer = await startRelayer(market.localnet);
    const agent = await listAgent(market, relayer);
    try {
      const payer = await newPayer(market, relayer, 10_000_000n);
      const response = await execute(relayer, payer, agent.address);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const transactions = (response.body as { transactions: { escrow: string; settlement: string } }).transactions;
      for (const signature of [transactions.escrow, transactions.settlement]) {
        const { limit, consumed } = await budgetOf(market, signature);
        assert.ok(consumed > 0 && consumed <= limit, `${signature}: metered ${consumed} within the limit ${limit}`);
      }
    } finally {
      await agent.server.close();
    }
  });
});
