// A payer disputes without the marketplace's indexer: the SDK rebuilds each settlement's receipt
// log leaf and Merkle proof from the chain's history of the agent's receipt log
// (getSignaturesForAddress, getTransaction, the EscrowSettledToLog events), and the program
// accepts them. An execution id opened twice is two leaves, each disputable on its own.
import { strict as assert } from "node:assert";

import {
  batchDigest,
  disputeRoute,
  fetchDisputesOfExecution,
  fetchEscrow,
  escrowPda,
  openDisputeFor,
  outputHash,
  provenLeavesFromChain,
  receiptLeafHash,
  receiptLogHoldsRoot,
  receiptLogPda,
  receiptRootFromProof,
  fetchReceiptLog,
  resultDigest,
  settleBatchInstructions,
  toHex,
} from "@agent-market/program";

import { ed25519Sign, randomId, TestMarket, USDC, type AgentFixture, type OpenedEscrow, type Wallet } from "./src/fixtures.js";

describe("disputes without the indexer: leaves and proofs from the chain's history", function () {
  let market: TestMarket;
  let agent: AgentFixture;
  let payer: Wallet;
  let reused: OpenedEscrow;
  let reopened: OpenedEscrow;

  before(async () => {
    market = await TestMarket.start();
    agent = await market.agent();
    payer = await market.payer(10n * USDC);
    // One execution settled alone, then an id opened again after it settled: another escrow.
    reused = await market.openEscrow(agent, payer);
    await market.settle(reused, agent);
    const hash = reused.requestHash;
    const signature = await market.sendAsRelayer([market.openEscrowInstruction(agent, payer, reused.executionId, hash)]);
    reopened = { ...reused, signature };
    // Two more in one batch under one batch signature, so that a proof spans batch ends.
    const pair = [await market.openEscrow(agent, payer), await market.openEscrow(agent, payer)];
    const escrows = await Promise.all(
      pair.map(async (e) => (await fetchEscrow(market.connection, escrowPda(e.executionId, market.programId), { programId: market.programId }))!),
    );
    const items = escrows.map((_, i) => ({ resultHash: outputHash({ n: i }), units: BigInt(i) }));
    const digest = batchDigest(agent.address, escrows.map((escrow, i) => resultDigest({ escrow, ...items[i]! })));
    await market.sendAsRelayer(
      settleBatchInstructions({
        programId: market.programId,
        relayer: market.relayer.publicKey,
        usdcMint: market.usdcMint,
        agent: agent.address,
        payoutAccount: agent.payoutAccount,
        escrows,
        items,
        feeShardIndex: 1,
        signingKey: agent.signing.publicKey.toBytes(),
        signed: { kind: "batch", signature: ed25519Sign(agent.signing, digest) },
      }),
    );
    await market.settle(reopened, agent);
  });

  after(async () => {
    await market?.stop();
  });

  it("finds every settlement of an id, each with a proof to a root the log holds", async () => {
    const proven = await provenLeavesFromChain(market.connection, agent.address, reused.executionId, { programId: market.programId });
    assert.deepEqual(proven.map((p) => p.leafIndex), [0n, 3n], "settled first as leaf 0, then, opened again, as leaf 3");
    assert.deepEqual(proven.map((p) => p.leaf.nonce), [0n, 1n], "the agent's first and second escrows: opened again before the pair");
    const log = await fetchReceiptLog(market.connection, receiptLogPda(agent.address, market.programId), { programId: market.programId });
    for (const p of proven) {
      const root = receiptRootFromProof(receiptLeafHash(agent.address, p.leaf), p.leafIndex, p.proof);
      assert.equal(toHex(root), toHex(p.root));
      assert.ok(receiptLogHoldsRoot(log!, root), `leaf ${p.leafIndex}'s root is held`);
    }
  });

  it("finds nothing for an id never settled, or an agent without a log", async () => {
    assert.deepEqual(await provenLeavesFromChain(market.connection, agent.address, randomId(), { programId: market.programId }), []);
    const other = await market.agent();
    assert.deepEqual(await provenLeavesFromChain(market.connection, other.address, reused.executionId, { programId: market.programId }), []);
    assert.equal(
      await disputeRoute(market.connection, randomId(), { programId: market.programId, source: { kind: "chain", agent: agent.address } }),
      null,
    );
  });

  it("opens a dispute of each settlement of the reused id, told apart by nonce, and refuses a second of the same leaf", async () => {
    const routeOf = (nonce?: bigint) =>
      disputeRoute(market.connection, reused.executionId, {
        programId: market.programId,
        source: { kind: "chain", agent: agent.address, payer: payer.wallet.publicKey, ...(nonce === undefined ? {} : { nonce }) },
      });
    const latest = await routeOf();
    assert.ok(latest);
    assert.deepEqual([latest.source, latest.leafIndex, latest.leaf.nonce, latest.disputed], ["chain", 3n, 1n, false]);
    const first = await routeOf(0n);
    assert.ok(first);
    assert.equal(first.leafIndex, 0n);
    assert.equal(await routeOf(2n), null, "nonce 2 is another execution's escrow");

    for (const route of [first, latest]) {
      await market.send([openDisputeFor(route, { payer: payer.wallet.publicKey, evidenceHash: new Uint8Array(32).fill(7), programId: market.programId })], [payer.wallet]);
    }
    const disputes = await fetchDisputesOfExecution(market.connection, reused.executionId, { programId: market.programId });
    assert.deepEqual(disputes.map((d) => d.dispute.leafIndex), [0n, 3n]);
    assert.ok(disputes.every((d) => d.dispute.payer.equals(payer.wallet.publicKey) && !d.dispute.resolved));
    assert.equal((await routeOf(0n))!.disputed, true);
    await market.expectPreflightError(
      [openDisputeFor(first, { payer: payer.wallet.publicKey, evidenceHash: new Uint8Array(32), programId: market.programId })],
      [payer.wallet],
      "AlreadyDisputed",
    );
  });

  it("refuses to build the dispute for a wallet that did not pay", async () => {
    const route = await disputeRoute(market.connection, reused.executionId, {
      programId: market.programId,
      source: { kind: "chain", agent: agent.address },
    });
    const stranger = await market.fundedWallet();
    assert.throws(() => openDisputeFor(route!, { payer: stranger.publicKey, evidenceHash: new Uint8Array(32), programId: market.programId }), {
      message: `the execution was paid by ${payer.wallet.publicKey.toBase58()}, not ${stranger.publicKey.toBase58()}`,
    });
  });
});
