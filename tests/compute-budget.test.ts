// Every transaction asks for the compute it needs (issue 44): localnet meters the program as a
// cluster would (docs/localnet.md, "Metering") and refuses a transaction past its limit, so a
// paid execution's transactions carry a unit limit the meter's charge stays within, and a batched
// open the default 200,000 units cannot hold lands under the limit `withComputeBudget` sizes for it.
import { strict as assert } from "node:assert";

import {
  computeUnitLimit,
  ESCROW_SEED,
  openEscrowBatchInstruction,
  SEARCH_TRY_UNITS,
  withComputeBudget,
} from "@agent-market/program";
import { ComputeBudgetProgram, PublicKey, type TransactionInstruction } from "@solana/web3.js";

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

/** An execution id whose escrow address the program finds at a bump `wanted` accepts. */
function idWithEscrowBump(programId: PublicKey, wanted: (bump: number) => boolean): Uint8Array {
  for (;;) {
    const id = randomId();
    if (wanted(PublicKey.findProgramAddressSync([ESCROW_SEED, id], programId)[1])) return id;
  }
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

  it("a batched open the default 200,000 units cannot hold is refused under a smaller limit, and lands under the one the SDK asks for", async () => {
    const agent = await market.agent();
    const payer = await market.payer(100n * USDC);
    // Six items: what a legacy transaction holds of one payer (eight need the agent's lookup table).
    const items = 6;
    const batch = (): TransactionInstruction =>
      openEscrowBatchInstruction({
        programId: market.programId,
        relayer: market.relayer.publicKey,
        usdcMint: market.usdcMint,
        agent: agent.address,
        items: Array.from({ length: items }, () => ({
          executionId: randomId(),
          apiKeyId: new Uint8Array(16),
          requestHash: new Uint8Array(32).fill(4),
          maxAmountUsdc: NO_MAXIMUM_USDC,
          payer: payer.wallet.publicKey,
          payerTokenAccount: payer.tokenAccount,
        })),
      });
    const limit = computeUnitLimit([batch()], market.programId);
    assert.ok(limit > 200_000, `the SDK asks for more than an instruction's default: ${limit}`);

    const before = await market.usdc(payer.tokenAccount);
    const tooLittle = [ComputeBudgetProgram.setComputeUnitLimit({ units: 100_000 }), batch()];
    await assert.rejects(market.send(tooLittle, [market.relayer]), /exceeded CUs meter|ComputationalBudgetExceeded|computational budget/i);
    assert.equal(await market.usdc(payer.tokenAccount), before, "the refused batch moved nothing");

    const landing = batch();
    const signature = await market.send(withComputeBudget([landing], market.programId), [market.relayer]);
    const used = await budgetOf(market, signature);
    assert.equal(used.limit, computeUnitLimit([landing], market.programId));
    assert.ok(used.consumed > 100_000 && used.consumed <= used.limit, `metered ${used.consumed} within the limit ${used.limit}`);
    assert.equal(await market.usdc(payer.tokenAccount), before - BigInt(items) * 250_000n);
  });

  it("an open whose escrow address takes many candidate bumps asks for those searches too, and lands", async () => {
    const agent = await market.agent();
    const payer = await market.payer(100n * USDC);
    const open = (executionId: Uint8Array) => market.openEscrowInstruction(agent, payer, executionId, new Uint8Array(32).fill(4));
    const lucky = computeUnitLimit([open(idWithEscrowBump(market.programId, (bump) => bump === 255))], market.programId);
    // An execution id whose escrow address the program finds at its 13th candidate or later: 1 in
    // 4,096, and 18,000 units more than at the first, which a flat margin would not hold.
    const instruction = open(idWithEscrowBump(market.programId, (bump) => bump <= 243));
    const limit = computeUnitLimit([instruction], market.programId);
    assert.ok(limit >= lucky + Math.ceil((12 * SEARCH_TRY_UNITS * 125) / 100), `${limit} counts 12 more candidates than ${lucky}`);
    const used = await budgetOf(market, await market.send(withComputeBudget([instruction], market.programId), [market.relayer]));
    assert.equal(used.limit, limit);
    assert.ok(used.consumed > lucky, `metered ${used.consumed}, more than the ${lucky} asked for at the first candidate`);
    assert.ok(used.consumed <= used.limit);
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
