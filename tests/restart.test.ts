// `localnet --ledger DIR` across restarts: balances, accounts, the clock and the transaction
// history survive both a clean stop (SIGINT, what Ctrl-C sends) and a crash (SIGKILL), and the
// market keeps working on the restarted chain.
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  collateralVaultPda,
  escrowPda,
  escrowVaultPda,
  eventsFromInnerInstructions,
  feeShardPda,
  fetchAgent,
  fetchEscrow,
  marketPda,
  provenLeavesFromChain,
  receiptLogPda,
  toHex,
} from "@agent-market/program";
import type { PublicKey } from "@solana/web3.js";

import { ESCROW_GRACE_SECS, MAX_EXECUTION_SECS, PRICE_USDC, TestMarket, USDC, type AgentFixture, type OpenedEscrow, type Wallet } from "./src/fixtures.js";
import { SLOT_MS, sleep } from "./src/localnet.js";

interface AccountSnapshot {
  lamports: number;
  owner: string;
  data: string;
}

async function snapshot(t: TestMarket, addresses: PublicKey[]): Promise<Record<string, AccountSnapshot | null>> {
  const infos = await t.connection.getMultipleAccountsInfo(addresses);
  return Object.fromEntries(
    addresses.map((address, i) => {
      const info = infos[i];
      return [address.toBase58(), info ? { lamports: info.lamports, owner: info.owner.toBase58(), data: toHex(info.data) } : null];
    }),
  );
}

async function transactionRecord(t: TestMarket, signature: string) {
  const tx = await t.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
  assert.ok(tx?.meta, `${signature} is in the history`);
  return {
    slot: tx.slot,
    blockTime: tx.blockTime,
    fee: tx.meta.fee,
    err: tx.meta.err,
    preBalances: tx.meta.preBalances,
    postBalances: tx.meta.postBalances,
    preTokenBalances: JSON.stringify(tx.meta.preTokenBalances),
    postTokenBalances: JSON.stringify(tx.meta.postTokenBalances),
    logMessages: tx.meta.logMessages,
    events: JSON.stringify(eventsFromInnerInstructions(tx, t.programId), (_, value: unknown) => (typeof value === "bigint" ? value.toString() : value)),
  };
}

describe("localnet --ledger across restarts", function () {
  let ledger: string;
  let t: TestMarket | undefined;

  before(function () {
    ledger = mkdtempSync(join(tmpdir(), "agent-market-ledger-"));
  });

  after(async function () {
    await t?.stop();
    rmSync(ledger, { recursive: true, force: true });
  });

  it("keeps balances, accounts, the clock and history through a clean stop and a crash", async function () {
    t = await TestMarket.start({ ledger });
    const genesisHash = await t.connection.getGenesisHash();

    // Before: an agent, a settled execution and an escrow left open past its deadline.
    const agent: AgentFixture = await t.agent();
    const payer: Wallet = await t.payer(5n * USDC);
    const settled: OpenedEscrow = await t.openEscrow(agent, payer);
    const settleSignature = await t.settle(settled, agent, 4);
    const open: OpenedEscrow = await t.openEscrow(agent, payer);
    const deadline = (await fetchEscrow(t.connection, escrowPda(open.executionId, t.programId), { programId: t.programId }))!.deadline;
    await t.localnet.advanceClock({ seconds: MAX_EXECUTION_SECS + ESCROW_GRACE_SECS + 1 });
    const clockBefore = await t.now();
    assert.ok(clockBefore > deadline);

    const watched = [
      marketPda(t.programId),
      agent.address,
      collateralVaultPda(agent.address, t.programId),
      escrowVaultPda(agent.address, t.programId),
      escrowPda(open.executionId, t.programId),
      receiptLogPda(agent.address, t.programId),
      feeShardPda(4, t.programId),
      agent.creator.wallet.publicKey,
      agent.creator.tokenAccount,
      payer.wallet.publicKey,
      payer.tokenAccount,
      t.relayer.publicKey,
      t.usdcMint,
    ];
    const accountsBefore = await snapshot(t, watched);
    const historyBefore = (await t.connection.getSignaturesForAddress(agent.address)).map((s) => s.signature);
    // The registration created the agent's receipt log too: one transaction.
    assert.deepEqual(historyBefore, [open.signature, settleSignature, settled.signature, agent.signature]);
    const settleBefore = await transactionRecord(t, settleSignature);
    assert.equal(JSON.parse(settleBefore.events).length, 1);
    const slotBefore = await t.localnet.slot();
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC - 2n * PRICE_USDC);

    // A clean stop: SIGINT, on which localnet stops serving, saves and exits with 0.
    assert.equal(await t.stop({ graceful: true }), 0);
    t = await TestMarket.start({ ledger });

    assert.equal(await t.connection.getGenesisHash(), genesisHash, "the same chain");
    assert.ok((await t.localnet.slot()) >= slotBefore, "slots go on from where they were");
    assert.ok((await t.now()) >= clockBefore, "the clock, moved forward, stays moved");
    assert.deepEqual(await snapshot(t, watched), accountsBefore, "every account, to the lamport and byte");
    assert.deepEqual((await t.connection.getSignaturesForAddress(agent.address)).map((s) => s.signature), historyBefore);
    assert.deepEqual(await transactionRecord(t, settleSignature), settleBefore);
    assert.equal((await t.connection.getSignatureStatus(settleSignature, { searchTransactionHistory: true })).value?.err, null);
    assert.equal((await fetchAgent(t.connection, agent.address, { programId: t.programId }))?.collateralUsdc, 100n * USDC);

    // The restarted chain runs the market: the payer reclaims the expired escrow, and a new
    // execution opens and settles.
    const reclaimed = await t.send([t.reclaimInstruction(open)], [payer.wallet]);
    assert.equal((await t.event(reclaimed, "EscrowReclaimed")).amountUsdc, PRICE_USDC);
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC - PRICE_USDC);
    const next = await t.openEscrow(agent, payer);
    const creatorUsdc = await t.usdc(agent.payoutAccount);
    await t.settle(next, agent);
    assert.equal(await t.usdc(agent.payoutAccount), creatorUsdc + 247_500n);
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC - 2n * PRICE_USDC);

    // A crash: the ledger is saved every slot, so after a few slots SIGKILL loses nothing.
    const afterReclaim = await snapshot(t, watched);
    const historyAfter = (await t.connection.getSignaturesForAddress(payer.tokenAccount)).map((s) => s.signature);
    assert.deepEqual(historyAfter.slice(0, 4), [next.signature, reclaimed, open.signature, settled.signature]);
    await sleep(4 * SLOT_MS);
    assert.equal(await t.stop(), null, "killed by a signal");
    t = await TestMarket.start({ ledger });

    assert.deepEqual(await snapshot(t, watched), afterReclaim);
    assert.deepEqual((await t.connection.getSignaturesForAddress(payer.tokenAccount)).map((s) => s.signature), historyAfter);
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC - 2n * PRICE_USDC);
    assert.equal(await t.exists(escrowPda(open.executionId, t.programId)), false);
    // Settled after the restart: its leaf follows the first settlement's in the receipt log.
    const leaves = await provenLeavesFromChain(t.connection, agent.address, next.executionId, { programId: t.programId });
    assert.deepEqual(leaves.map((leaf) => leaf.leafIndex), [1n]);
  });
});
