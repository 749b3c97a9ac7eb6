// Unmodified ecosystem code against localnet, as against any cluster: @solana/spl-token's
// actions, anchor's Program (account namespace and methods builder), web3.js's sending and
// confirming, and onLogs subscriptions.
import { strict as assert } from "node:assert";

import anchor, { AnchorProvider, Program, Wallet, type AccountClient, type Idl } from "@coral-xyz/anchor";
import {
  accountNameOf,
  agentPda,
  collateralVaultPda,
  errorFromTransactionError,
  eventsFromInnerInstructions,
  FEE_SHARD_COUNT,
  fetchAgent,
  IDL,
  marketPda,
  PROGRAM_ID,
  receiptLogPda,
  toHex,
  withdrawCollateralInstruction,
} from "@agent-market/program";
import {
  approve,
  createAssociatedTokenAccount,
  createMint,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
  getOrCreateAssociatedTokenAccount,
  mintTo,
  revoke,
  transfer,
  transferChecked,
  MINT_SIZE,
  ACCOUNT_SIZE,
} from "@solana/spl-token";
import {
  Keypair,
  LAMPORTS_PER_SOL,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  sendAndConfirmTransaction,
  type Context,
  type Logs,
} from "@solana/web3.js";

import { LAMPORTS_PER_SIGNATURE, MIN_COLLATERAL_USDC, PRICE_USDC, TestMarket, USDC, payPerUse } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";

// anchor is CommonJS; Node finds `BN` (a getter re-export) only on its module object.
const { BN } = anchor;

describe("ecosystem clients against localnet", function () {
  let t: TestMarket;

  before(async function () {
    t = await TestMarket.start();
  });

  after(async function () {
    await t?.stop();
  });

  /** Each transaction paid 5,000 lamports per signature; returns their sum. */
  async function feesOf(signatures: string[]): Promise<bigint> {
    let total = 0n;
    for (const signature of signatures) {
      const tx = await t.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
      assert.ok(tx?.meta, `${signature} is recorded`);
      assert.equal(tx.meta.err, null);
      assert.equal(BigInt(tx.meta.fee), LAMPORTS_PER_SIGNATURE * BigInt(tx.transaction.signatures.length));
      total += BigInt(tx.meta.fee);
    }
    return total;
  }

  it("@solana/spl-token: create a mint and ATAs, mint, transfer, approve, transfer as delegate, revoke", async function () {
    const payer = await t.fundedWallet();
    const mintAuthority = Keypair.generate();
    const [alice, bob, carol] = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
    const payerBefore = await t.lamports(payer.publicKey);
    const signatures: string[] = [];
    const track = async (signature: Promise<string>) => {
      signatures.push(await signature);
    };

    const mintKeypair = Keypair.generate();
    const mint = await createMint(t.connection, payer, mintAuthority.publicKey, null, 6, mintKeypair);
    assert.equal(mint.toBase58(), mintKeypair.publicKey.toBase58());
    const [created] = await t.connection.getSignaturesForAddress(mint);
    signatures.push(created!.signature);
    let mintInfo = await getMint(t.connection, mint);
    assert.equal(mintInfo.decimals, 6);
    assert.equal(mintInfo.supply, 0n);
    assert.equal(mintInfo.mintAuthority?.toBase58(), mintAuthority.publicKey.toBase58());
    assert.equal(mintInfo.freezeAuthority, null);

    const aliceAta = await createAssociatedTokenAccount(t.connection, payer, mint, alice.publicKey);
    assert.equal(aliceAta.toBase58(), getAssociatedTokenAddressSync(mint, alice.publicKey).toBase58());
    signatures.push((await t.connection.getSignaturesForAddress(aliceAta))[0]!.signature);
    const bobAta = (await getOrCreateAssociatedTokenAccount(t.connection, payer, mint, bob.publicKey)).address;
    signatures.push((await t.connection.getSignaturesForAddress(bobAta))[0]!.signature);
    // A second call finds the account and sends nothing.
    const again = await getOrCreateAssociatedTokenAccount(t.connection, payer, mint, bob.publicKey);
    assert.equal(again.address.toBase58(), bobAta.toBase58());
    assert.equal((await t.connection.getSignaturesForAddress(bobAta)).length, 1);

    await track(mintTo(t.connection, payer, mint, aliceAta, mintAuthority, 1_000_000n));
    mintInfo = await getMint(t.connection, mint);
    assert.equal(mintInfo.supply, 1_000_000n);
    assert.equal((await getAccount(t.connection, aliceAta)).amount, 1_000_000n);

    await track(transfer(t.connection, payer, aliceAta, bobAta, alice, 250_000n));
    await track(transferChecked(t.connection, payer, aliceAta, mint, bobAta, alice, 1n, 6));
    assert.equal((await getAccount(t.connection, aliceAta)).amount, 749_999n);
    assert.equal((await getAccount(t.connection, bobAta)).amount, 250_001n);

    await track(approve(t.connection, payer, aliceAta, carol.publicKey, alice, 100_000n));
    let aliceAccount = await getAccount(t.connection, aliceAta);
    assert.equal(aliceAccount.delegate?.toBase58(), carol.publicKey.toBase58());
    assert.equal(aliceAccount.delegatedAmount, 100_000n);

    await track(transfer(t.connection, payer, aliceAta, bobAta, carol, 40_000n));
    aliceAccount = await getAccount(t.connection, aliceAta);
    assert.equal(aliceAccount.amount, 709_999n);
    assert.equal(aliceAccount.delegatedAmount, 60_000n);
    assert.equal((await getAccount(t.connection, bobAta)).amount, 290_001n);

    // Past the allowance the token program refuses (TokenError::InsufficientFunds = 1).
    await assert.rejects(transfer(t.connection, payer, aliceAta, bobAta, carol, 60_001n), (err: unknown) => {
      assert.ok(err instanceof SendTransactionError);
      assert.match(err.message, /custom program error: 0x1\b/);
      return true;
    });

    await track(revoke(t.connection, payer, aliceAta, alice));
    aliceAccount = await getAccount(t.connection, aliceAta);
    assert.equal(aliceAccount.delegate, null);
    assert.equal(aliceAccount.delegatedAmount, 0n);
    assert.equal(aliceAccount.amount, 709_999n);

    // The payer paid every fee and the rent of the mint and both token accounts, to the lamport;
    // the refused transfer failed its preflight and cost nothing.
    const rent =
      BigInt(await t.connection.getMinimumBalanceForRentExemption(MINT_SIZE)) +
      2n * BigInt(await t.connection.getMinimumBalanceForRentExemption(ACCOUNT_SIZE));
    assert.equal(await t.lamports(payer.publicKey), payerBefore - (await feesOf(signatures)) - rent);
  });

  it("@solana/spl-token with the market's USDC: the development mint authority mints, the payer approves the delegate", async function () {
    const usdc = await getMint(t.connection, t.usdcMint);
    assert.equal(usdc.decimals, 6);
    assert.equal(usdc.mintAuthority?.toBase58(), t.keys.mintAuthority.publicKey.toBase58());
    const supply = usdc.supply;

    const owner = await t.fundedWallet();
    const ata = await getOrCreateAssociatedTokenAccount(t.connection, owner, t.usdcMint, owner.publicKey);
    await mintTo(t.connection, owner, t.usdcMint, ata.address, t.keys.mintAuthority, 7n * USDC);
    assert.equal((await getMint(t.connection, t.usdcMint)).supply, supply + 7n * USDC);
    assert.equal(await t.usdc(ata.address), 7n * USDC);

    const delegate = t.config.delegate;
    await approve(t.connection, owner, ata.address, delegate, owner, 3n * USDC);
    const account = await getAccount(t.connection, ata.address);
    assert.equal(account.delegate?.toBase58(), delegate.toBase58());
    assert.equal(account.delegatedAmount, 3n * USDC);

    // That approval is all open_escrow needs.
    const agent = await t.agent();
    const opened = await t.openEscrow(agent, { wallet: owner, tokenAccount: ata.address });
    assert.equal(await t.usdc(ata.address), 7n * USDC - PRICE_USDC);
    assert.equal((await getAccount(t.connection, ata.address)).delegatedAmount, 3n * USDC - PRICE_USDC);
    await t.settle(opened, agent);
  });

  it("anchor: program.account.<x>.all(), fetch and fetchMultiple, and methods…rpc() through an AnchorProvider", async function () {
    const payPerUseAgent = await t.agent();
    const hybridAgent = await t.agent({ kind: "Hybrid", periodPriceUsdc: 2n * USDC, periodSecs: 3600, includedCalls: 3, overagePriceUsdc: 50_000n });
    const payer = await t.payer(10n * USDC);
    const settled = await t.openEscrow(payPerUseAgent, payer);
    await t.settle(settled, payPerUseAgent);
    const open = await t.openEscrow(payPerUseAgent, payer);
    await t.sendAsRelayer([t.subscribeInstruction(hybridAgent, payer)]);

    const provider = new AnchorProvider(t.connection, new Wallet(payPerUseAgent.creator.wallet), { commitment: "confirmed" });
    // The package's `AgentMarket` type is the IDL JSON's (snake_case names); anchor's Program is
    // typed for the camelCase IDL that `anchor build` writes to target/types, so it is used
    // untyped here (`program.account` as a record of clients). At run time anchor converts the
    // JSON itself, as for any IDL.
    const program = new Program(IDL as unknown as Idl, provider);
    const accounts = program.account as unknown as Record<string, AccountClient<Idl, string, any, any>>;
    assert.equal(program.programId.toBase58(), PROGRAM_ID.toBase58());

    const market = await accounts.market.fetch(marketPda(t.programId));
    assert.equal(market.relayer.toBase58(), t.relayer.publicKey.toBase58());
    assert.ok(market.minCollateralUsdc.eq(new BN(MIN_COLLATERAL_USDC.toString())));
    assert.equal(market.feeShardBumps.length, FEE_SHARD_COUNT);
    assert.equal((await accounts.market.all()).length, 1);

    // all() finds exactly the agents a raw getProgramAccounts finds, decoded alike by anchor and
    // by the program client.
    const programAccounts = await t.connection.getProgramAccounts(PROGRAM_ID);
    const rawAgents = programAccounts.filter(({ account }) => accountNameOf(account.data) === "Agent");
    const agents = await accounts.agent.all();
    const addresses = agents.map((a) => a.publicKey.toBase58()).sort();
    assert.deepEqual(addresses, rawAgents.map((a) => a.pubkey.toBase58()).sort());
    for (const agent of [payPerUseAgent, hybridAgent]) assert.ok(addresses.includes(agent.address.toBase58()));
    for (const { publicKey, account: agentAccount } of agents) {
      const decoded = await fetchAgent(t.connection, publicKey, { programId: t.programId });
      assert.ok(decoded);
      assert.equal(publicKey.toBase58(), agentPda(decoded.agentId, t.programId).toBase58());
      assert.equal(agentAccount.creator.toBase58(), decoded.creator.toBase58());
      assert.equal(agentAccount.collateralUsdc.toString(), decoded.collateralUsdc.toString());
      assert.equal(agentAccount.endpoint, decoded.endpoint);
      assert.equal(agentAccount.openDisputes, decoded.openDisputes);
    }
    // The creator field follows the 8-byte discriminator: a memcmp filter finds one agent.
    const mine = await accounts.agent.all([{ memcmp: { offset: 8, bytes: payPerUseAgent.creator.wallet.publicKey.toBase58() } }]);
    assert.deepEqual(mine.map((a) => a.publicKey.toBase58()), [payPerUseAgent.address.toBase58()]);
    assert.ok("hybrid" in (await accounts.agent.fetch(hybridAgent.address)).pricing);

    const escrows = await accounts.escrow.all();
    assert.deepEqual(escrows.map((e) => toHex(Uint8Array.from(e.account.executionId))), [toHex(open.executionId)]);
    assert.equal(escrows[0]!.account.amountUsdc.toString(), PRICE_USDC.toString());
    // The settlement is a leaf of the agent's receipt log, a zero-copy account anchor reads too.
    const log = await accounts.receiptLog.fetch(receiptLogPda(payPerUseAgent.address, t.programId));
    assert.equal(log.agent.toBase58(), payPerUseAgent.address.toBase58());
    assert.equal(log.leafCount.toString(), "1");
    const subscriptions = await accounts.subscription.all();
    assert.equal(subscriptions.length, 1);
    assert.equal(subscriptions[0]!.account.includedCallsRemaining, 3);
    assert.equal(subscriptions[0]!.account.payer.toBase58(), payer.wallet.publicKey.toBase58());

    const [one, missing] = await accounts.agent.fetchMultiple([payPerUseAgent.address, agentPda(new Uint8Array(16), t.programId)]);
    assert.equal(one?.creator.toBase58(), payPerUseAgent.creator.wallet.publicKey.toBase58());
    assert.equal(missing, null);
    assert.equal(await accounts.dispute.fetchNullable(agentPda(new Uint8Array(16), t.programId)), null);

    // anchor builds, signs (the provider's wallet, the creator) and confirms these itself.
    const creator = payPerUseAgent.creator;
    await t.localnet.mintUsdc(creator.wallet.publicKey, 5n * USDC);
    const topUp = await program.methods
      .topUpCollateral(new BN((5n * USDC).toString()))
      .accountsPartial({
        creator: creator.wallet.publicKey,
        market: marketPda(t.programId),
        agent: payPerUseAgent.address,
        collateralVault: collateralVaultPda(payPerUseAgent.address, t.programId),
        creatorTokenAccount: creator.tokenAccount,
        usdcMint: t.usdcMint,
      })
      .rpc();
    assert.equal(await t.usdc(collateralVaultPda(payPerUseAgent.address, t.programId)), MIN_COLLATERAL_USDC + 5n * USDC);
    assert.equal((await t.event(topUp, "CollateralToppedUp")).collateralUsdc, MIN_COLLATERAL_USDC + 5n * USDC);

    const retire = await program.methods.retireAgent().accountsPartial({ creator: creator.wallet.publicKey, agent: payPerUseAgent.address }).rpc();
    const retired = await accounts.agent.fetch(payPerUseAgent.address);
    assert.deepEqual(retired.status, { retired: {} });
    assert.equal(retired.collateralUsdc.toString(), (MIN_COLLATERAL_USDC + 5n * USDC).toString());
    assert.equal((await t.event(retire, "AgentRetired")).retiredAt.toString(), retired.retiredAt.toString());
  });

  it("web3.js: sendAndConfirmTransaction, sendRawTransaction + confirmTransaction (processed to finalized), v0 transactions, history", async function () {
    const sender = await t.fundedWallet();
    const recipient = Keypair.generate().publicKey;

    const first = await sendAndConfirmTransaction(
      t.connection,
      new Transaction().add(SystemProgram.transfer({ fromPubkey: sender.publicKey, toPubkey: recipient, lamports: LAMPORTS_PER_SOL })),
      [sender],
    );
    assert.equal(await t.lamports(recipient), BigInt(LAMPORTS_PER_SOL));
    const status = (await t.connection.getSignatureStatus(first)).value;
    assert.ok(status && status.confirmationStatus !== "processed" && status.err === null);

    // A v0 transaction, confirmed with the block-height strategy up to finalized.
    const latest = await t.connection.getLatestBlockhash("finalized");
    const message = new TransactionMessage({
      payerKey: sender.publicKey,
      recentBlockhash: latest.blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: sender.publicKey, toPubkey: recipient, lamports: 12_345 })],
    }).compileToV0Message();
    const v0 = new VersionedTransaction(message);
    v0.sign([sender]);
    const second = await t.connection.sendRawTransaction(v0.serialize());
    const processed = await t.connection.confirmTransaction({ signature: second, ...latest }, "processed");
    assert.equal(processed.value.err, null);
    const finalized = await t.connection.confirmTransaction({ signature: second, ...latest }, "finalized");
    assert.equal(finalized.value.err, null);
    assert.equal((await t.connection.getSignatureStatus(second)).value?.confirmationStatus, "finalized");
    const v0Record = await t.connection.getTransaction(second, { commitment: "finalized", maxSupportedTransactionVersion: 0 });
    assert.equal(v0Record?.version, 0);
    assert.equal(v0Record?.meta?.fee, 5_000);

    // The deprecated signature-only form still works.
    const legacy = new Transaction({ feePayer: sender.publicKey, ...(await t.connection.getLatestBlockhash()) }).add(
      SystemProgram.transfer({ fromPubkey: sender.publicKey, toPubkey: recipient, lamports: 1 }),
    );
    legacy.sign(sender);
    const third = await t.connection.sendRawTransaction(legacy.serialize());
    assert.equal((await t.connection.confirmTransaction(third)).value.err, null);

    assert.equal(await t.lamports(recipient), BigInt(LAMPORTS_PER_SOL) + 12_345n + 1n);
    assert.equal(
      await t.lamports(sender.publicKey),
      10n * BigInt(LAMPORTS_PER_SOL) - BigInt(LAMPORTS_PER_SOL) - 12_345n - 1n - 3n * LAMPORTS_PER_SIGNATURE,
    );
    const history = await t.connection.getSignaturesForAddress(recipient);
    assert.deepEqual(history.map((h) => h.signature), [third, second, first], "newest first");
    assert.deepEqual(
      (await t.connection.getSignaturesForAddress(recipient, { before: third, limit: 1 })).map((h) => h.signature),
      [second],
    );
    const record = await t.connection.getTransaction(first, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
    assert.deepEqual(record?.meta?.postBalances.slice(0, 2), [
      record!.meta!.preBalances[0]! - LAMPORTS_PER_SOL - 5_000,
      LAMPORTS_PER_SOL,
    ]);
  });

  it("onLogs: by program, by mentioned account and for all transactions, successes and failures", async function () {
    const agent = await t.agent(payPerUse());
    const payer = await t.payer(USDC);
    const seen = { program: new Map<string, Logs>(), agent: new Map<string, Logs>(), all: new Map<string, Logs>() };
    const slots = new Map<string, number>();
    const listen = (into: Map<string, Logs>) => (logs: Logs, context: Context) => {
      into.set(logs.signature, logs);
      slots.set(logs.signature, context.slot);
    };
    const subscriptions = [
      t.connection.onLogs(PROGRAM_ID, listen(seen.program), "confirmed"),
      t.connection.onLogs(agent.address, listen(seen.agent), "confirmed"),
      t.connection.onLogs("all", listen(seen.all), "confirmed"),
    ];
    const waitFor = async (signature: string, maps: Map<string, Logs>[], timeoutMs = 5_000): Promise<boolean> => {
      const deadline = Date.now() + timeoutMs;
      while (!maps.every((m) => m.has(signature))) {
        if (Date.now() > deadline) return false;
        await sleep(10);
      }
      return true;
    };

    try {
      // A withdrawal the program refuses (the agent is active), sent without preflight: it lands
      // with its error, mentions the program and the agent, and so reaches all three. Sent until
      // one arrives, since a subscription starts some time after onLogs returns.
      const withdraw = withdrawCollateralInstruction({
        programId: t.programId,
        creator: agent.creator.wallet.publicKey,
        agent: agent.address,
        creatorTokenAccount: agent.creator.tokenAccount,
        usdcMint: t.usdcMint,
      });
      let failed: string | undefined;
      for (let attempt = 0; attempt < 20 && !failed; attempt++) {
        const { signature } = await t.expectOnChainError([withdraw], [agent.creator.wallet], "AgentNotRetired");
        if (await waitFor(signature, [seen.program, seen.agent, seen.all], 1_000)) failed = signature;
      }
      assert.ok(failed, "the subscriptions deliver");
      for (const map of Object.values(seen)) {
        const logs: Logs = map.get(failed)!;
        assert.equal(errorFromTransactionError(logs.err)?.name, "AgentNotRetired");
        assert.ok(logs.logs.some((line) => line.includes("Error Code: AgentNotRetired.")));
      }

      // open_escrow and settle: logs as getTransaction has them, with no error.
      const opened = await t.openEscrow(agent, payer);
      const settled = await t.settle(opened, agent);
      for (const signature of [opened.signature, settled]) {
        assert.ok(await waitFor(signature, [seen.program, seen.agent, seen.all]), `notified of ${signature}`);
        const tx = await t.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
        assert.equal(slots.get(signature), tx?.slot);
        for (const map of Object.values(seen)) {
          const logs = map.get(signature)!;
          assert.equal(logs.err, null);
          assert.deepEqual(logs.logs, tx?.meta?.logMessages);
        }
        assert.equal(eventsFromInnerInstructions(tx!, t.programId).length, 1);
      }
      assert.ok(seen.program.get(opened.signature)!.logs.includes(`Program ${PROGRAM_ID.toBase58()} invoke [1]`));
      assert.ok(seen.program.get(opened.signature)!.logs.includes("Program log: Instruction: OpenEscrow"));
      assert.ok(seen.program.get(settled)!.logs.includes("Program log: Instruction: SettleBatch"));

      // A plain transfer reaches "all" only. Notifications come in order on the one socket, so
      // once the program's subscription has the next program transaction, it would have had it.
      const bystander = await t.fundedWallet();
      const plain = await sendAndConfirmTransaction(
        t.connection,
        new Transaction().add(SystemProgram.transfer({ fromPubkey: bystander.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 })),
        [bystander],
      );
      const after = await t.openEscrow(agent, payer);
      assert.ok(await waitFor(plain, [seen.all]));
      assert.ok(await waitFor(after.signature, [seen.program, seen.agent, seen.all]));
      assert.equal(seen.program.has(plain), false);
      assert.equal(seen.agent.has(plain), false);
      assert.deepEqual(seen.all.get(plain)!.logs, [
        "Program 11111111111111111111111111111111 invoke [1]",
        "Program 11111111111111111111111111111111 success",
      ]);
      await t.sendAsRelayer([t.refundInstruction(after, "RelayerError")]);
    } finally {
      for (const id of subscriptions) await t.connection.removeOnLogsListener(id);
    }
  });
});
