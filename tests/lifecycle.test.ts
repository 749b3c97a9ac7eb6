// The program's whole lifecycle on localnet through an ordinary web3.js Connection and the
// program client (the scenarios of programs/agent_market/tests/lifecycle.rs, over RPC): every
// USDC balance and every lamport checked to the unit.
import { strict as assert } from "node:assert";

import {
  agentPda,
  collateralVaultPda,
  delegatePda,
  disputePda,
  escrowPda,
  escrowVaultPda,
  FEE_BPS,
  FEE_SHARD_COUNT,
  feeShardPda,
  fetchAgent,
  fetchDispute,
  fetchEscrow,
  fetchMarket,
  fetchReceiptLog,
  fetchSubscription,
  marketPda,
  openDisputeInstruction,
  PROGRAM_ID,
  provenLeavesFromChain,
  receiptLeafHash,
  receiptLogHoldsRoot,
  receiptLogPda,
  receiptRootFromProof,
  resolveDisputeInstruction,
  retireAgentInstruction,
  splitPayment,
  subscriptionPda,
  toHex,
  topUpCollateralInstruction,
  withdrawCollateralInstruction,
  closeDisputeInstruction,
  type Pricing,
} from "@agent-market/program";
import { getAccount, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";

import {
  COLLATERAL_COOLDOWN_SECS,
  DISPUTE_WINDOW_SECS,
  ESCROW_GRACE_SECS,
  LAMPORTS_PER_SIGNATURE,
  MAX_EXECUTION_SECS,
  MIN_COLLATERAL_USDC,
  MIN_PRICE_PER_CALL_USDC,
  PRICE_USDC,
  payPerUse,
  randomId,
  TestMarket,
  USDC,
  type AgentFixture,
  type Wallet,
} from "./src/fixtures.js";

const FEE = LAMPORTS_PER_SIGNATURE;

function sameKey(actual: PublicKey, expected: PublicKey, what: string): void {
  assert.equal(actual.toBase58(), expected.toBase58(), what);
}

function sameBytes(actual: Uint8Array, expected: Uint8Array, what: string): void {
  assert.equal(toHex(actual), toHex(expected), what);
}

describe("lifecycle over JSON-RPC", function () {
  let t: TestMarket;

  before(async function () {
    t = await TestMarket.start();
  });

  after(async function () {
    await t?.stop();
  });

  it("the market is initialized as localnet_marketConfig describes it, with its eight fee shards", async function () {
    sameKey(t.config.programId, PROGRAM_ID, "program id");
    sameKey(t.config.market, marketPda(t.programId), "market PDA");
    sameKey(t.config.delegate, delegatePda(t.programId), "delegate PDA");
    assert.equal(BigInt(t.config.feeBps), FEE_BPS);

    const market = await fetchMarket(t.connection, undefined, { programId: t.programId });
    assert.ok(market);
    sameKey(market.authority, t.keys.authority.publicKey, "authority");
    sameKey(market.relayer, t.relayer.publicKey, "relayer");
    sameKey(market.arbiter, t.arbiter.publicKey, "arbiter");
    sameKey(market.treasury, t.config.treasury, "treasury");
    sameKey(market.usdcMint, t.usdcMint, "USDC mint");
    assert.equal(market.minCollateralUsdc, MIN_COLLATERAL_USDC);
    assert.equal(market.minPricePerCallUsdc, MIN_PRICE_PER_CALL_USDC);
    assert.equal(market.escrowGraceSecs, ESCROW_GRACE_SECS);
    assert.equal(market.disputeWindowSecs, DISPUTE_WINDOW_SECS);
    assert.equal(market.collateralCooldownSecs, COLLATERAL_COOLDOWN_SECS);
    assert.equal(market.escrowsPaused, false);

    const treasury = await getAccount(t.connection, t.config.treasury);
    sameKey(treasury.mint, t.usdcMint, "treasury mint");
    for (let index = 0; index < FEE_SHARD_COUNT; index++) {
      const shard = await getAccount(t.connection, feeShardPda(index, t.programId));
      sameKey(shard.owner, marketPda(t.programId), `fee shard ${index} owner`);
      sameKey(shard.mint, t.usdcMint, `fee shard ${index} mint`);
    }
    const shardAccount = await t.connection.getAccountInfo(feeShardPda(0, t.programId));
    sameKey(shardAccount!.owner, TOKEN_PROGRAM_ID, "fee shards are SPL Token accounts");
  });

  it("register_agent locks the collateral in the agent's vault; below the minimum it is refused", async function () {
    const creator = await t.walletWithUsdc(150n * USDC);
    const lamportsBefore = await t.lamports(creator.wallet.publicKey);
    const agentId = randomId();
    const signing = Keypair.generate();
    const signature = await t.send(
      t.registerAgentInstructions(creator, agentId, signing, payPerUse(), 120n * USDC),
      [creator.wallet],
    );
    const agent = agentPda(agentId, t.programId);

    assert.equal(await t.usdc(creator.tokenAccount), 30n * USDC);
    assert.equal(await t.usdc(collateralVaultPda(agent, t.programId)), 120n * USDC);
    assert.equal(await t.usdc(escrowVaultPda(agent, t.programId)), 0n);
    const collateralVault = await getAccount(t.connection, collateralVaultPda(agent, t.programId));
    sameKey(collateralVault.owner, agent, "the collateral vault is owned by the agent PDA");

    const stored = await fetchAgent(t.connection, agent, { programId: t.programId });
    assert.ok(stored);
    sameKey(stored.creator, creator.wallet.publicKey, "creator");
    sameBytes(stored.agentId, agentId, "agent id");
    sameBytes(stored.signingKey, signing.publicKey.toBytes(), "signing key");
    sameKey(stored.payoutAccount, creator.tokenAccount, "payout account");
    assert.deepEqual(stored.pricing, { kind: "PayPerUse", priceUsdc: PRICE_USDC });
    assert.equal(stored.maxExecutionSecs, MAX_EXECUTION_SECS);
    assert.equal(stored.collateralUsdc, 120n * USDC);
    assert.equal(stored.status, "Active");
    assert.equal(stored.openDisputes, 0);

    const registered = await t.event(signature, "AgentRegistered");
    sameKey(registered.agent, agent, "event agent");
    assert.equal(registered.collateralUsdc, 120n * USDC);
    assert.equal(registered.registeredAt, stored.registeredAt);

    // The creator paid two signatures (its own, and the signing key's proof the precompile
    // verifies) and the rent of the agent, its two vaults and its receipt log, nothing else.
    let rent = 0n;
    for (const address of [agent, collateralVaultPda(agent, t.programId), escrowVaultPda(agent, t.programId), receiptLogPda(agent, t.programId)]) {
      const info = await t.connection.getAccountInfo(address);
      assert.ok(info);
      assert.equal(info.lamports, await t.connection.getMinimumBalanceForRentExemption(info.data.length));
      rent += BigInt(info.lamports);
    }
    assert.equal(await t.fee(signature), 2n * FEE);
    assert.equal(await t.lamports(creator.wallet.publicKey), lamportsBefore - 2n * FEE - rent);

    const poor = await t.walletWithUsdc(MIN_COLLATERAL_USDC);
    const poorId = randomId();
    await t.expectPreflightError(
      t.registerAgentInstructions(poor, poorId, Keypair.generate(), payPerUse(), MIN_COLLATERAL_USDC - 1n),
      [poor.wallet],
      "CollateralBelowMinimum",
    );
    assert.equal(await t.usdc(poor.tokenAccount), MIN_COLLATERAL_USDC);
    assert.equal(await t.exists(agentPda(poorId, t.programId)), false);
  });

  it("the payer approves the delegate; open_escrow takes the price; settle with the creator's signature pays 99/1", async function () {
    const agent = await t.agent();
    const payer = await t.walletWithUsdc(10n * USDC);
    await t.approveMarket(payer, 5n * USDC);
    const approved = await getAccount(t.connection, payer.tokenAccount);
    sameKey(approved.delegate!, delegatePda(t.programId), "delegate");
    assert.equal(approved.delegatedAmount, 5n * USDC);

    const relayerBefore = await t.lamports(t.relayer.publicKey);
    const opened = await t.openEscrow(agent, payer);
    assert.equal(await t.usdc(payer.tokenAccount), 10n * USDC - PRICE_USDC);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), PRICE_USDC);
    assert.equal((await getAccount(t.connection, payer.tokenAccount)).delegatedAmount, 5n * USDC - PRICE_USDC);

    const escrow = await fetchEscrow(t.connection, escrowPda(opened.executionId, t.programId), { programId: t.programId });
    assert.ok(escrow);
    assert.equal(escrow.amountUsdc, PRICE_USDC);
    sameKey(escrow.payer, payer.wallet.publicKey, "escrow payer");
    sameKey(escrow.payerTokenAccount, payer.tokenAccount, "escrow payer token account");
    sameKey(escrow.rentPayer, t.relayer.publicKey, "escrow rent payer");
    sameBytes(escrow.apiKeyId, new Uint8Array(16).fill(9), "api key id");
    sameBytes(escrow.requestHash, opened.requestHash, "request hash");
    assert.equal(escrow.deadline, escrow.openedAt + BigInt(MAX_EXECUTION_SECS + ESCROW_GRACE_SECS));
    assert.equal(escrow.usedIncludedCall, false);
    const openedEvent = await t.event(opened.signature, "EscrowOpened");
    assert.equal(openedEvent.amountUsdc, PRICE_USDC);
    assert.equal(openedEvent.deadline, escrow.deadline);
    const escrowRent = await t.lamports(escrowPda(opened.executionId, t.programId));
    assert.equal(await t.lamports(t.relayer.publicKey), relayerBefore - FEE - escrowRent);

    const creatorBefore = await t.usdc(agent.payoutAccount);
    const shardBefore = await t.usdc(feeShardPda(5, t.programId));
    const settled = await t.settle(opened, agent, 5);
    const { creatorShareUsdc, feeUsdc } = splitPayment(PRICE_USDC);
    assert.equal(feeUsdc, 2_500n);
    assert.equal(creatorShareUsdc, 247_500n);
    assert.equal(await t.usdc(agent.payoutAccount), creatorBefore + 247_500n);
    assert.equal(await t.usdc(feeShardPda(5, t.programId)), shardBefore + 2_500n);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), 0n);
    assert.equal(await t.usdc(payer.tokenAccount), 10n * USDC - PRICE_USDC);
    assert.equal(await t.exists(escrowPda(opened.executionId, t.programId)), false, "the escrow is closed");

    // The settlement is leaf 0 of the agent's receipt log: its event carries every field of it.
    const leaf = await t.settledLeaf(settled);
    sameKey(leaf.payer, payer.wallet.publicKey, "leaf payer");
    sameKey(leaf.payerTokenAccount, payer.tokenAccount, "leaf payer token account");
    sameKey(leaf.agent, agent.address, "leaf agent");
    assert.equal(leaf.nonce, escrow.nonce, "the escrow's nonce");
    assert.equal(leaf.units, 0n);
    assert.equal(leaf.amountUsdc, PRICE_USDC);
    assert.equal(leaf.creatorShareUsdc, 247_500n);
    assert.equal(leaf.feeUsdc, 2_500n);
    assert.equal(leaf.leafIndex, 0n);
    const log = await fetchReceiptLog(t.connection, receiptLogPda(agent.address, t.programId), { programId: t.programId });
    assert.equal(log?.leafCount, 1n);

    // settle_batch of one pays for two signatures (the relayer's and the one the precompile
    // verified); the relayer gets the escrow's rent back and pays no rent: the creator paid the log.
    assert.equal(await t.fee(settled), 2n * FEE);
    assert.equal(await t.lamports(t.relayer.publicKey), relayerBefore - 3n * FEE);
  });

  it("settle refuses a result signed by any key but the agent's", async function () {
    const agent = await t.agent();
    const payer = await t.payer(USDC);
    const opened = await t.openEscrow(agent, payer);
    const forged = await t.settleInstructions(opened.executionId, { signing: Keypair.generate() });
    await t.expectPreflightError(forged, [t.relayer], "SignerKeyMismatch");
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), PRICE_USDC);
    await t.settle(opened, agent);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), 0n);
  });

  it("refund returns the escrow to the payer", async function () {
    const agent = await t.agent();
    const payer = await t.payer(USDC, USDC);
    const relayerBefore = await t.lamports(t.relayer.publicKey);
    const opened = await t.openEscrow(agent, payer);
    assert.equal(await t.usdc(payer.tokenAccount), USDC - PRICE_USDC);

    const signature = await t.sendAsRelayer([t.refundInstruction(opened, "CreatorError")]);
    assert.equal(await t.usdc(payer.tokenAccount), USDC);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), 0n);
    assert.equal(await t.exists(escrowPda(opened.executionId, t.programId)), false);
    // The allowance is spent by the transfer in; a refund does not restore it.
    assert.equal((await getAccount(t.connection, payer.tokenAccount)).delegatedAmount, USDC - PRICE_USDC);
    const refunded = await t.event(signature, "EscrowRefunded");
    assert.equal(refunded.reason, "CreatorError");
    assert.equal(refunded.amountUsdc, PRICE_USDC);
    // Two signatures; the escrow's rent came back.
    assert.equal(await t.lamports(t.relayer.publicKey), relayerBefore - 2n * FEE);
  });

  it("the payer reclaims an unsettled escrow only after its deadline, once the clock has moved", async function () {
    const agent = await t.agent();
    const payer = await t.payer(USDC, USDC);
    const opened = await t.openEscrow(agent, payer);
    const escrowRent = await t.lamports(escrowPda(opened.executionId, t.programId));
    const escrow = await fetchEscrow(t.connection, escrowPda(opened.executionId, t.programId), { programId: t.programId });
    assert.ok(escrow);
    assert.ok((await t.now()) < escrow.deadline);

    await t.expectPreflightError([t.reclaimInstruction(opened)], [payer.wallet], "EscrowNotExpired");
    assert.equal(await t.usdc(payer.tokenAccount), USDC - PRICE_USDC);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), PRICE_USDC);

    await t.localnet.advanceClock({ seconds: MAX_EXECUTION_SECS + ESCROW_GRACE_SECS + 1 });
    assert.ok((await t.now()) > escrow.deadline, "the clock moved past the deadline");

    // Past the deadline the relayer can no longer settle (into the agent's log), and the payer can reclaim.
    await t.expectPreflightError(await t.settleInstructions(opened.executionId, { signing: agent.signing }), [t.relayer], "EscrowExpired");
    const payerLamports = await t.lamports(payer.wallet.publicKey);
    const relayerLamports = await t.lamports(t.relayer.publicKey);
    const signature = await t.send([t.reclaimInstruction(opened)], [payer.wallet]);
    assert.equal(await t.usdc(payer.tokenAccount), USDC);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), 0n);
    assert.equal(await t.exists(escrowPda(opened.executionId, t.programId)), false);
    assert.equal(await t.lamports(payer.wallet.publicKey), payerLamports - FEE);
    assert.equal(await t.lamports(t.relayer.publicKey), relayerLamports + escrowRent, "the rent goes back to the relayer");
    const reclaimed = await t.event(signature, "EscrowReclaimed");
    assert.equal(reclaimed.amountUsdc, PRICE_USDC);
    sameKey(reclaimed.payer, payer.wallet.publicKey, "reclaimed by");
  });

  it("a subscription pays its period at once and covers zero-amount calls until it expires", async function () {
    const periodPrice = 10n * USDC;
    const periodSecs = 30 * 24 * 3600;
    const agent = await t.agent({ kind: "Subscription", periodPriceUsdc: periodPrice, periodSecs });
    const payer = await t.payer(25n * USDC);

    // No subscription yet: the call is refused and nothing moves.
    const executionId = randomId();
    const open = () => t.openEscrowInstruction(agent, payer, executionId, new Uint8Array(32).fill(1));
    await t.expectPreflightError([open()], [t.relayer], "SubscriptionRequired");
    assert.equal(await t.usdc(payer.tokenAccount), 25n * USDC);

    const creatorBefore = await t.usdc(agent.payoutAccount);
    const shardBefore = await t.usdc(feeShardPda(3, t.programId));
    const subscribed = await t.sendAsRelayer([t.subscribeInstruction(agent, payer, 3)]);
    assert.equal(await t.usdc(payer.tokenAccount), 15n * USDC);
    assert.equal(await t.usdc(agent.payoutAccount), creatorBefore + 9_900_000n);
    assert.equal(await t.usdc(feeShardPda(3, t.programId)), shardBefore + 100_000n);
    const subscription = await fetchSubscription(t.connection, subscriptionPda(agent.address, payer.wallet.publicKey, t.programId), { programId: t.programId });
    assert.ok(subscription);
    assert.equal(subscription.expiresAt, subscription.periodStartedAt + BigInt(periodSecs));
    const event = await t.event(subscribed, "Subscribed");
    assert.equal(event.amountUsdc, periodPrice);
    assert.equal(event.creatorShareUsdc, 9_900_000n);
    assert.equal(event.feeUsdc, 100_000n);
    assert.equal(event.expiresAt, subscription.expiresAt);

    // Covered calls open zero-amount escrows, so every execution is still recorded on-chain.
    const covered = await t.openEscrow(agent, payer);
    assert.equal((await t.event(covered.signature, "EscrowOpened")).amountUsdc, 0n);
    const creatorMid = await t.usdc(agent.payoutAccount);
    const settled = await t.settle(covered, agent);
    assert.equal((await t.settledLeaf(settled)).amountUsdc, 0n);
    assert.equal(await t.usdc(payer.tokenAccount), 15n * USDC);
    assert.equal(await t.usdc(agent.payoutAccount), creatorMid);

    // A second period extends the first.
    await t.sendAsRelayer([t.subscribeInstruction(agent, payer, 3)]);
    const extended = await fetchSubscription(t.connection, subscriptionPda(agent.address, payer.wallet.publicKey, t.programId), { programId: t.programId });
    assert.equal(extended?.expiresAt, subscription.expiresAt + BigInt(periodSecs));
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC);

    await t.localnet.advanceClock({ seconds: 2 * periodSecs });
    assert.ok((await t.now()) >= extended!.expiresAt);
    await t.expectPreflightError([open()], [t.relayer], "SubscriptionRequired");
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC);
  });

  it("hybrid: included calls first, then the overage; a refunded covered call gives its call back", async function () {
    const overage = 300_000n;
    const pricing: Pricing = { kind: "Hybrid", periodPriceUsdc: 5n * USDC, periodSecs: 3600, includedCalls: 2, overagePriceUsdc: overage };
    const agent = await t.agent(pricing);
    const payer = await t.payer(10n * USDC);
    const subscription = subscriptionPda(agent.address, payer.wallet.publicKey, t.programId);
    const remaining = async () => (await fetchSubscription(t.connection, subscription, { programId: t.programId }))!.includedCallsRemaining;

    // Without a subscription a hybrid call pays the overage price.
    const unsubscribed = await t.openEscrow(agent, payer);
    assert.equal(await t.usdc(payer.tokenAccount), 10n * USDC - overage);
    await t.sendAsRelayer([t.refundInstruction(unsubscribed, "Timeout")]);
    assert.equal(await t.usdc(payer.tokenAccount), 10n * USDC);

    await t.sendAsRelayer([t.subscribeInstruction(agent, payer, 1)]);
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC);
    assert.equal(await remaining(), 2);

    const first = await t.openEscrow(agent, payer);
    assert.equal((await fetchEscrow(t.connection, escrowPda(first.executionId, t.programId), { programId: t.programId }))?.usedIncludedCall, true);
    assert.equal(await remaining(), 1);
    await t.sendAsRelayer([t.refundInstruction(first, "CreatorError", true)]);
    assert.equal(await remaining(), 2, "the refunded call is given back");

    const creatorBefore = await t.usdc(agent.payoutAccount);
    for (let i = 0; i < 2; i++) {
      const covered = await t.openEscrow(agent, payer);
      assert.equal((await fetchEscrow(t.connection, escrowPda(covered.executionId, t.programId), { programId: t.programId }))?.amountUsdc, 0n);
      await t.settle(covered, agent);
    }
    assert.equal(await remaining(), 0);
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC);
    assert.equal(await t.usdc(agent.payoutAccount), creatorBefore);

    const shardBefore = await t.usdc(feeShardPda(2, t.programId));
    const over = await t.openEscrow(agent, payer);
    const escrow = await fetchEscrow(t.connection, escrowPda(over.executionId, t.programId), { programId: t.programId });
    assert.equal(escrow?.amountUsdc, overage);
    assert.equal(escrow?.usedIncludedCall, false);
    assert.equal(await t.usdc(payer.tokenAccount), 5n * USDC - overage);
    await t.settle(over, agent, 2);
    assert.equal(await t.usdc(agent.payoutAccount), creatorBefore + 297_000n);
    assert.equal(await t.usdc(feeShardPda(2, t.programId)), shardBefore + 3_000n);
    assert.equal(await t.usdc(escrowVaultPda(agent.address, t.programId)), 0n);
  });

  it("an upheld dispute slashes collateral to the payer, never more than there is", async function () {
    const agent = await t.agent();
    const payer = await t.payer(USDC);
    const first = await settledExecution(agent, payer);
    const second = await settledExecution(agent, payer);

    const payerLamports = await t.lamports(payer.wallet.publicKey);
    const disputed = await t.send([await disputeInstruction(agent, first.executionId)], [payer.wallet]);
    const firstDispute = disputePda(agent.address, first.leafIndex, t.programId);
    const disputeRent = await t.lamports(firstDispute);
    assert.equal(await t.lamports(payer.wallet.publicKey), payerLamports - FEE - disputeRent);
    const dispute = await fetchDispute(t.connection, firstDispute, { programId: t.programId });
    assert.ok(dispute);
    assert.equal(dispute.leafIndex, first.leafIndex);
    assert.equal(dispute.resolved, false);
    assert.equal(dispute.amountUsdc, PRICE_USDC);
    sameBytes(dispute.evidenceHash, new Uint8Array(32).fill(4), "evidence hash");
    assert.equal((await t.event(disputed, "DisputeOpened")).amountUsdc, PRICE_USDC);
    assert.equal((await fetchAgent(t.connection, agent.address, { programId: t.programId }))?.openDisputes, 1);

    // Upheld for 30 USDC: exactly that leaves the collateral for the payer. The dispute stays,
    // resolved, until its leaf's window passes: its rent comes back with close_dispute.
    const payerUsdc = await t.usdc(payer.tokenAccount);
    const payerLamportsBefore = await t.lamports(payer.wallet.publicKey);
    const resolved = await t.send([resolveInstruction(agent, payer, first.leafIndex, true, 30n * USDC)], [t.arbiter]);
    const resolvedEvent = await t.event(resolved, "DisputeResolved");
    assert.equal(resolvedEvent.upheld, true);
    assert.equal(resolvedEvent.slashedUsdc, 30n * USDC);
    assert.equal(await t.usdc(payer.tokenAccount), payerUsdc + 30n * USDC);
    assert.equal(await t.lamports(payer.wallet.publicKey), payerLamportsBefore);
    assert.equal(await t.usdc(collateralVaultPda(agent.address, t.programId)), 70n * USDC);
    const resolvedDispute = await fetchDispute(t.connection, firstDispute, { programId: t.programId });
    assert.deepEqual([resolvedDispute?.resolved, resolvedDispute?.upheld], [true, true]);
    const afterFirst = await fetchAgent(t.connection, agent.address, { programId: t.programId });
    assert.equal(afterFirst?.collateralUsdc, 70n * USDC);
    assert.equal(afterFirst?.openDisputes, 0);

    // A resolved execution cannot be disputed again.
    await t.expectPreflightError([await disputeInstruction(agent, first.executionId)], [payer.wallet], "AlreadyDisputed");
    await t.expectPreflightError([resolveInstruction(agent, payer, first.leafIndex, false, 0n)], [t.arbiter], "DisputeAlreadyResolved");

    // Upheld for 1,000 USDC against the 70 left: 70 is slashed.
    await t.send([await disputeInstruction(agent, second.executionId)], [payer.wallet]);
    const capped = await t.send([resolveInstruction(agent, payer, second.leafIndex, true, 1_000n * USDC)], [t.arbiter]);
    assert.equal((await t.event(capped, "DisputeResolved")).slashedUsdc, 70n * USDC);
    assert.equal(await t.usdc(payer.tokenAccount), payerUsdc + 100n * USDC);
    assert.equal(await t.usdc(collateralVaultPda(agent.address, t.programId)), 0n);
    assert.equal((await fetchAgent(t.connection, agent.address, { programId: t.programId }))?.collateralUsdc, 0n);
  });

  it("collateral: top-up, retire, no withdrawal before the cooldown or while a dispute is open, then all of it", async function () {
    const agent = await t.agent();
    const creator = agent.creator;
    await t.localnet.mintUsdc(creator.wallet.publicKey, 50n * USDC);
    const topUp = await t.send(
      [
        topUpCollateralInstruction({
          programId: t.programId,
          creator: creator.wallet.publicKey,
          agent: agent.address,
          creatorTokenAccount: creator.tokenAccount,
          usdcMint: t.usdcMint,
          amountUsdc: 50n * USDC,
        }),
      ],
      [creator.wallet],
    );
    const toppedUp = await t.event(topUp, "CollateralToppedUp");
    assert.equal(toppedUp.amountUsdc, 50n * USDC);
    assert.equal(toppedUp.collateralUsdc, 150n * USDC);
    assert.equal(await t.usdc(collateralVaultPda(agent.address, t.programId)), 150n * USDC);
    assert.equal(await t.usdc(creator.tokenAccount), 0n);

    const payer = await t.payer(USDC);
    const execution = await settledExecution(agent, payer);
    const creatorUsdc = await t.usdc(creator.tokenAccount);
    assert.equal(creatorUsdc, 247_500n, "the creator's share of the call");

    const retired = await t.send([retireAgentInstruction({ programId: t.programId, creator: creator.wallet.publicKey, agent: agent.address })], [creator.wallet]);
    const stored = await fetchAgent(t.connection, agent.address, { programId: t.programId });
    assert.equal(stored?.status, "Retired");
    assert.equal((await t.event(retired, "AgentRetired")).retiredAt, stored?.retiredAt);
    await t.expectPreflightError(
      [t.openEscrowInstruction(agent, payer, randomId(), new Uint8Array(32))],
      [t.relayer],
      "AgentRetired",
    );

    const withdraw = withdrawCollateralInstruction({
      programId: t.programId,
      creator: creator.wallet.publicKey,
      agent: agent.address,
      creatorTokenAccount: creator.tokenAccount,
      usdcMint: t.usdcMint,
    });
    await t.expectPreflightError([withdraw], [creator.wallet], "CollateralCooldownActive");

    // The payer disputes the call within its window (which the cooldown outlasts).
    await t.send([await disputeInstruction(agent, execution.executionId)], [payer.wallet]);
    await t.localnet.advanceClock({ seconds: COLLATERAL_COOLDOWN_SECS });
    assert.ok((await t.now()) >= stored!.retiredAt + BigInt(COLLATERAL_COOLDOWN_SECS));

    // Past the cooldown, the open dispute still holds the collateral. Sent without preflight,
    // the refused withdrawal lands on chain with its error and pays its fee, and moves nothing.
    const creatorLamports = await t.lamports(creator.wallet.publicKey);
    const failed = await t.expectOnChainError([withdraw], [creator.wallet], "OpenDisputes");
    assert.equal(failed.fee, FEE);
    assert.equal(await t.lamports(creator.wallet.publicKey), creatorLamports - FEE);
    assert.equal(await t.usdc(collateralVaultPda(agent.address, t.programId)), 150n * USDC);
    assert.equal(await t.usdc(creator.tokenAccount), creatorUsdc);

    // Rejected: nothing is slashed, and the dispute no longer blocks the withdrawal.
    const payerUsdc = await t.usdc(payer.tokenAccount);
    await t.send([resolveInstruction(agent, payer, execution.leafIndex, false, 0n)], [t.arbiter]);
    assert.equal(await t.usdc(payer.tokenAccount), payerUsdc);
    assert.equal(await t.usdc(collateralVaultPda(agent.address, t.programId)), 150n * USDC);

    const withdrawn = await t.send([withdraw], [creator.wallet]);
    assert.equal((await t.event(withdrawn, "CollateralWithdrawn")).amountUsdc, 150n * USDC);
    assert.equal(await t.usdc(creator.tokenAccount), creatorUsdc + 150n * USDC);
    assert.equal(await t.usdc(collateralVaultPda(agent.address, t.programId)), 0n);
    assert.equal((await fetchAgent(t.connection, agent.address, { programId: t.programId }))?.collateralUsdc, 0n);

    // The dispute window has passed too: anyone may close the resolved dispute, its rent goes
    // back to the payer that paid it.
    const disputeAddress = disputePda(agent.address, execution.leafIndex, t.programId);
    const disputeRent = await t.lamports(disputeAddress);
    const payerLamports = await t.lamports(payer.wallet.publicKey);
    const closer = await t.fundedWallet();
    const closed = await t.send(
      [closeDisputeInstruction({ programId: t.programId, agent: agent.address, leafIndex: execution.leafIndex, payer: payer.wallet.publicKey })],
      [closer],
    );
    const closedEvent = await t.event(closed, "DisputeClosed");
    assert.deepEqual([closedEvent.agent.toBase58(), closedEvent.leafIndex], [agent.address.toBase58(), execution.leafIndex]);
    assert.equal(await t.lamports(payer.wallet.publicKey), payerLamports + disputeRent);
    assert.equal(await t.exists(disputeAddress), false);
  });

  /** An execution settled into the agent's receipt log, and its leaf's index. */
  async function settledExecution(agent: AgentFixture, payer: Wallet) {
    const opened = await t.openEscrow(agent, payer);
    const settled = await t.settle(opened, agent);
    return { ...opened, leafIndex: (await t.settledLeaf(settled)).leafIndex };
  }

  /** open_dispute of the execution's leaf, with the proof rebuilt from the chain's history of the log. */
  async function disputeInstruction(agent: AgentFixture, executionId: Uint8Array) {
    const [proven] = await provenLeavesFromChain(t.connection, agent.address, executionId, { programId: t.programId });
    assert.ok(proven, "the settlement is a provable leaf");
    const log = await fetchReceiptLog(t.connection, receiptLogPda(agent.address, t.programId), { programId: t.programId });
    assert.ok(receiptLogHoldsRoot(log!, receiptRootFromProof(receiptLeafHash(agent.address, proven.leaf), proven.leafIndex, proven.proof)));
    return openDisputeInstruction({
      programId: t.programId,
      agent: agent.address,
      leaf: proven.leaf,
      leafIndex: proven.leafIndex,
      proof: proven.proof,
      evidenceHash: new Uint8Array(32).fill(4),
    });
  }

  function resolveInstruction(agent: AgentFixture, payer: Wallet, leafIndex: bigint, upheld: boolean, slashUsdc: bigint) {
    return resolveDisputeInstruction({
      programId: t.programId,
      arbiter: t.arbiter.publicKey,
      usdcMint: t.usdcMint,
      agent: agent.address,
      leafIndex,
      payerTokenAccount: payer.tokenAccount,
      upheld,
      slashUsdc,
    });
  }
});
