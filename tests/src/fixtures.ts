// A market on a running localnet, driven through an ordinary web3.js Connection and the program
// client's instruction builders: funded wallets, test USDC, delegate approvals with
// @solana/spl-token, agents, escrows, and the assertions the tests share (balances to the unit,
// events from confirmed transactions, program errors decoded with the client's error mapping).
import { strict as assert } from "node:assert";
import { createPrivateKey, randomBytes, sign } from "node:crypto";

import {
  AGENT_MARKET_ERRORS,
  agentPda,
  delegatePda,
  errorCode,
  errorFromCode,
  errorFromTransactionError,
  escrowPda,
  eventsFromInnerInstructions,
  fetchAgent,
  fetchEscrow,
  openEscrowInstruction,
  outputHash,
  reclaimInstruction,
  refundInstruction,
  registerAgentInstructions,
  requestHash,
  resultDigest,
  settleBatchInstructions,
  signingKeyProofDigest,
  settledLeaves,
  subscribeInstruction,
  type AgentMarketErrorName,
  type AgentMarketEvent,
  type AgentTerms,
  type EscrowRef,
  type EventData,
  type EventName,
  type Pricing,
  type RefundReason,
  type SettledLeaf,
} from "@agent-market/program";
import { createApproveInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SendTransactionError,
  SYSVAR_CLOCK_PUBKEY,
  Transaction,
  type Signer,
  type TransactionInstruction,
} from "@solana/web3.js";

import { devKeys, Localnet, sleep, SLOT_MS, type DevKeys, type MarketConfig, type StartOptions } from "./localnet.js";

/** One USDC in base units (6 decimals). */
export const USDC = 1_000_000n;
/** The market's settings in localnet/dev-config.json. */
export const MIN_COLLATERAL_USDC = 100n * USDC;
export const ESCROW_GRACE_SECS = 60;
export const DISPUTE_WINDOW_SECS = 3 * 24 * 3600;
export const COLLATERAL_COOLDOWN_SECS = 7 * 24 * 3600;
export const MIN_PRICE_PER_CALL_USDC = 10_000n;
/** What the tests' agents declare, and charge by default. */
export const MAX_EXECUTION_SECS = 30;
export const PRICE_USDC = 250_000n;
/** The `maxAmountUsdc` of calls whose test is not about the maximum: u64::MAX. */
export const NO_MAXIMUM_USDC = 2n ** 64n - 1n;
/** Fee per signature, the only fee localnet charges (as a cluster without priority fees). */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

export interface Wallet {
  wallet: Keypair;
  /** Its USDC associated token account. */
  tokenAccount: PublicKey;
}

export interface AgentFixture {
  agentId: Uint8Array;
  address: PublicKey;
  /** The creator's Ed25519 key that signs results. */
  signing: Keypair;
  payoutAccount: PublicKey;
  creator: Wallet;
  /** The register_agent transaction. */
  signature: string;
}

export interface OpenedEscrow {
  executionId: Uint8Array;
  ref: EscrowRef;
  requestHash: Uint8Array;
  signature: string;
}

export function randomId(): Uint8Array {
  return new Uint8Array(randomBytes(16));
}

/** PKCS #8 DER prefix of an Ed25519 private key: the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * An Ed25519 signature by `keypair` (a Solana 64-byte secret key: seed ‖ public key) over
 * `message`, made with Node's own crypto, independently of the program client.
 */
export function ed25519Sign(keypair: Keypair, message: Uint8Array): Uint8Array {
  const seed = keypair.secretKey.subarray(0, 32);
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
  return new Uint8Array(sign(null, message, key));
}

/** `signing`'s signature over the signing-key proof of `agent` and `creator` (proof of possession). */
export function signingKeyProof(signing: Keypair, agent: PublicKey, creator: PublicKey): Uint8Array {
  return ed25519Sign(signing, signingKeyProofDigest(agent, creator));
}

export function terms(signing: Keypair, pricing: Pricing, maxExecutionSecs = MAX_EXECUTION_SECS): AgentTerms {
  return {
    signingKey: signing.publicKey.toBytes(),
    endpoint: "https://agent.example.com/run",
    listingHash: new Uint8Array(32).fill(7),
    pricing,
    maxExecutionSecs,
  };
}

export function payPerUse(priceUsdc: bigint = PRICE_USDC): Pricing {
  return { kind: "PayPerUse", priceUsdc };
}

/** Slots a sent transaction is given to show up before it is sent again. */
const REBROADCAST_SLOTS = 4;

/** A market on a localnet of its own, with the development keys that run it. */
export class TestMarket {
  private constructor(
    readonly localnet: Localnet,
    readonly connection: Connection,
    readonly keys: DevKeys,
    readonly config: MarketConfig,
  ) {}

  static async start(options: StartOptions = {}): Promise<TestMarket> {
    const localnet = await Localnet.start(options);
    try {
      return await TestMarket.attach(localnet);
    } catch (err) {
      await localnet.stop();
      throw err;
    }
  }

  /** A TestMarket over an already running localnet (a restarted one, for example). */
  static async attach(localnet: Localnet): Promise<TestMarket> {
    const keys = devKeys();
    const config = await localnet.marketConfig();
    assert.ok(config.relayer.equals(keys.relayer.publicKey), "localnet runs the development relayer");
    assert.ok(config.arbiter.equals(keys.arbiter.publicKey), "localnet runs the development arbiter");
    assert.ok(config.usdcMint.equals(keys.usdcMint.publicKey), "localnet runs the development USDC mint");
    return new TestMarket(localnet, localnet.connection(), keys, config);
  }

  stop(options: { graceful?: boolean } = {}): Promise<number | null> {
    return this.localnet.stop(options);
  }

  get usdcMint(): PublicKey {
    return this.config.usdcMint;
  }

  /** The program's address on this chain: what every instruction, address and account read here names. */
  get programId(): PublicKey {
    return this.localnet.programId;
  }

  get relayer(): Keypair {
    return this.keys.relayer;
  }

  get arbiter(): Keypair {
    return this.keys.arbiter;
  }

  // -------------------------------------------------------------------------------------------
  // Sending

  /**
   * Signs with `signers` (the first pays the fee), sends with preflight and waits for `confirmed`.
   * Like a client of a cluster, it sends the same bytes again every few slots until they land:
   * a devnet-like localnet loses some transactions (tests/src/localnet.ts, PROFILE).
   */
  async send(instructions: TransactionInstruction[], signers: Signer[]): Promise<string> {
    const latest = await this.connection.getLatestBlockhash();
    const transaction = new Transaction({ feePayer: signers[0]!.publicKey, ...latest }).add(...instructions);
    transaction.sign(...signers);
    const bytes = transaction.serialize();
    const signature = await this.connection.sendRawTransaction(bytes);
    for (let polls = 1; ; polls += 1) {
      await sleep(SLOT_MS);
      const status = (await this.connection.getSignatureStatus(signature)).value;
      if (status?.err) throw new Error(`Transaction ${signature} failed (${JSON.stringify(status)})`);
      if (status && status.confirmationStatus !== "processed") return signature;
      if (status) continue;
      if ((await this.connection.getBlockHeight("confirmed")) > latest.lastValidBlockHeight) {
        throw new Error(`Transaction ${signature} expired unlanded`);
      }
      // A resend may meet the first send landing meanwhile ("already been processed"): the next
      // poll reads the status either way.
      if (polls % REBROADCAST_SLOTS === 0) await this.connection.sendRawTransaction(bytes, { skipPreflight: true }).catch(() => undefined);
    }
  }

  sendAsRelayer(instructions: TransactionInstruction[]): Promise<string> {
    return this.send(instructions, [this.relayer]);
  }

  /**
   * Sends a transaction the program must refuse with `name`, as a client sees it: the preflight
   * simulation fails, `sendTransaction` rejects with a SendTransactionError carrying the custom
   * error code and the program's logs, and nothing is charged. Checks the error both in the
   * simulation's structured `err` and in the rejection, each decoded with the client's mapping.
   */
  async expectPreflightError(instructions: TransactionInstruction[], signers: Signer[], name: AgentMarketErrorName): Promise<void> {
    const code = errorCode(name);
    const simulated = await this.connection.simulateTransaction(new Transaction().add(...instructions), signers);
    assert.equal(errorFromTransactionError(simulated.value.err)?.name, name, `simulation: ${JSON.stringify(simulated.value.err)}`);
    assertAnchorErrorLogged(simulated.value.logs ?? [], name);

    const feePayer = signers[0]!.publicKey;
    const lamportsBefore = await this.lamports(feePayer);
    let rejection: unknown;
    try {
      await this.connection.sendTransaction(new Transaction().add(...instructions), signers);
    } catch (err) {
      rejection = err;
    }
    assert.ok(rejection instanceof SendTransactionError, `expected a SendTransactionError, got ${String(rejection)}`);
    const custom = /custom program error: (0x[0-9a-f]+)/i.exec(rejection.message);
    assert.ok(custom, `no custom program error in: ${rejection.message}`);
    const decoded = errorFromCode(Number(custom[1]));
    assert.equal(decoded?.name, name, rejection.message);
    assert.equal(decoded?.code, code);
    assertAnchorErrorLogged(await rejection.getLogs(this.connection), name);
    assert.equal(await this.lamports(feePayer), lamportsBefore, "a failed preflight charges nothing");
  }

  /**
   * Sends, without preflight, a transaction the program must refuse with `name`: it lands in a
   * block with its error and pays its fee. Checks the error from `confirmTransaction` and from
   * `getTransaction`, decoded with the client's mapping. Returns the signature and the fee.
   */
  async expectOnChainError(
    instructions: TransactionInstruction[],
    signers: Signer[],
    name: AgentMarketErrorName,
  ): Promise<{ signature: string; fee: bigint }> {
    const latest = await this.connection.getLatestBlockhash();
    const transaction = new Transaction({ feePayer: signers[0]!.publicKey, ...latest }).add(...instructions);
    transaction.sign(...signers);
    const signature = await this.connection.sendRawTransaction(transaction.serialize(), { skipPreflight: true });
    // web3.js 1.x resolves with `value.err` when the signature notification reports the failure,
    // but rejects with the bare error object when its status poll (right after subscribing)
    // finds the transaction already processed with an error, whatever its commitment then.
    let err: unknown;
    try {
      err = (await this.connection.confirmTransaction({ signature, ...latest }, "confirmed")).value.err;
    } catch (thrown) {
      if (thrown instanceof Error) throw thrown;
      err = thrown;
      await this.waitForConfirmed(signature);
    }
    assert.equal(errorFromTransactionError(err)?.name, name, `confirmTransaction: ${JSON.stringify(err)}`);

    const recorded = await this.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
    assert.ok(recorded?.meta, "the failed transaction is recorded");
    assert.equal(errorFromTransactionError(recorded.meta.err)?.name, name);
    assertAnchorErrorLogged(recorded.meta.logMessages ?? [], name);
    assert.deepEqual(eventsFromInnerInstructions(recorded, this.programId), [], "a failed transaction has no events");
    return { signature, fee: BigInt(recorded.meta.fee) };
  }

  /** Polls the signature's status until it is at least `confirmed`. */
  async waitForConfirmed(signature: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = (await this.connection.getSignatureStatus(signature)).value;
      if (status && status.confirmationStatus !== "processed") return;
      if (Date.now() > deadline) throw new Error(`${signature} not confirmed within ${timeoutMs} ms`);
      await sleep(SLOT_MS / 2);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  async usdc(tokenAccount: PublicKey): Promise<bigint> {
    const balance = await this.connection.getTokenAccountBalance(tokenAccount);
    assert.equal(balance.value.decimals, 6);
    return BigInt(balance.value.amount);
  }

  async lamports(address: PublicKey): Promise<bigint> {
    return BigInt(await this.connection.getBalance(address));
  }

  async exists(address: PublicKey): Promise<boolean> {
    return (await this.connection.getAccountInfo(address)) !== null;
  }

  /** `Clock::unix_timestamp` now (the clock sysvar: slot, epoch start, epoch, leader epoch, unix time). */
  async now(): Promise<bigint> {
    const clock = await this.connection.getAccountInfo(SYSVAR_CLOCK_PUBKEY);
    assert.ok(clock);
    return clock.data.readBigInt64LE(32);
  }

  /** The program's events in a confirmed, successful transaction. */
  async events(signature: string): Promise<AgentMarketEvent[]> {
    const tx = await this.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
    assert.ok(tx?.meta, `transaction ${signature} is recorded`);
    assert.equal(tx.meta.err, null);
    return eventsFromInnerInstructions(tx, this.programId);
  }

  /** The one execution a settlement transaction settled: its leaf of the receipt log, with its index and split. */
  async settledLeaf(signature: string): Promise<SettledLeaf> {
    const leaves = settledLeaves(await this.events(signature));
    assert.equal(leaves.length, 1, `one settled leaf in ${signature}`);
    return leaves[0]!;
  }

  /** The one event named `name` in transaction `signature`. */
  async event<E extends EventName>(signature: string, name: E): Promise<EventData<E>> {
    const found = (await this.events(signature)).filter((event) => event.name === name);
    assert.equal(found.length, 1, `one ${name} event in ${signature}`);
    return found[0]!.data as unknown as EventData<E>;
  }

  /** The fee a confirmed transaction paid. */
  async fee(signature: string): Promise<bigint> {
    const tx = await this.connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
    assert.ok(tx?.meta);
    return BigInt(tx.meta.fee);
  }

  // -------------------------------------------------------------------------------------------
  // Wallets

  /** A new wallet funded by the faucet through `requestAirdrop`. */
  async fundedWallet(lamports = 10n * BigInt(LAMPORTS_PER_SOL)): Promise<Keypair> {
    const wallet = Keypair.generate();
    const latest = await this.connection.getLatestBlockhash();
    const signature = await this.connection.requestAirdrop(wallet.publicKey, Number(lamports));
    const confirmation = await this.connection.confirmTransaction({ signature, ...latest });
    assert.equal(confirmation.value.err, null);
    assert.equal(await this.lamports(wallet.publicKey), lamports);
    return wallet;
  }

  /** A funded wallet with `usdc` test USDC in its associated token account. */
  async walletWithUsdc(usdc: bigint): Promise<Wallet> {
    const wallet = await this.fundedWallet();
    const minted = await this.localnet.mintUsdc(wallet.publicKey, usdc);
    const tokenAccount = getAssociatedTokenAddressSync(this.usdcMint, wallet.publicKey);
    assert.ok(minted.tokenAccount.equals(tokenAccount), "localnet_mintUsdc mints to the associated token account");
    assert.equal(minted.balance, usdc);
    await this.connection.confirmTransaction({ signature: minted.signature, ...(await this.connection.getLatestBlockhash()) });
    assert.equal(await this.usdc(tokenAccount), usdc);
    return { wallet: wallet, tokenAccount };
  }

  /** The wallet approves the market's delegate PDA for `allowance`, with @solana/spl-token's instruction. */
  async approveMarket(owner: Wallet, allowance: bigint): Promise<string> {
    return this.send([createApproveInstruction(owner.tokenAccount, delegatePda(this.programId), owner.wallet.publicKey, allowance)], [owner.wallet]);
  }

  /** A payer holding `usdc` that approved the market for `allowance`. */
  async payer(usdc: bigint, allowance: bigint = usdc): Promise<Wallet> {
    const payer = await this.walletWithUsdc(usdc);
    await this.approveMarket(payer, allowance);
    return payer;
  }

  // -------------------------------------------------------------------------------------------
  // The program

  /** `[signing-key proof by signing, register_agent]`. */
  registerAgentInstructions(creator: Wallet, agentId: Uint8Array, signing: Keypair, pricing: Pricing, collateralUsdc: bigint) {
    return registerAgentInstructions({
      programId: this.programId,
      creator: creator.wallet.publicKey,
      agentId,
      creatorTokenAccount: creator.tokenAccount,
      payoutAccount: creator.tokenAccount,
      usdcMint: this.usdcMint,
      terms: terms(signing, pricing),
      collateralUsdc,
      signingKeyProof: signingKeyProof(signing, agentPda(agentId, this.programId), creator.wallet.publicKey),
    });
  }

  /** A new creator (holding `collateralUsdc`) registers an agent with `pricing`, locking all of it. */
  async agent(pricing: Pricing = payPerUse(), collateralUsdc = MIN_COLLATERAL_USDC): Promise<AgentFixture> {
    const creator = await this.walletWithUsdc(collateralUsdc);
    const agentId = randomId();
    const signing = Keypair.generate();
    const signature = await this.send(
      this.registerAgentInstructions(creator, agentId, signing, pricing, collateralUsdc),
      [creator.wallet],
    );
    return { agentId, address: agentPda(agentId, this.programId), signing, payoutAccount: creator.tokenAccount, creator, signature };
  }

  openEscrowInstruction(
    agent: AgentFixture,
    payer: Wallet,
    executionId: Uint8Array,
    hash: Uint8Array,
    maxAmountUsdc: bigint = NO_MAXIMUM_USDC,
  ) {
    return openEscrowInstruction({
      programId: this.programId,
      relayer: this.relayer.publicKey,
      usdcMint: this.usdcMint,
      agent: agent.address,
      payer: payer.wallet.publicKey,
      payerTokenAccount: payer.tokenAccount,
      executionId,
      apiKeyId: new Uint8Array(16).fill(9),
      requestHash: hash,
      maxAmountUsdc,
    });
  }

  /** What identifies the escrow of `executionId` before it exists. */
  escrowRef(agent: AgentFixture, payer: Wallet, executionId: Uint8Array): EscrowRef {
    return {
      executionId,
      agent: agent.address,
      payer: payer.wallet.publicKey,
      payerTokenAccount: payer.tokenAccount,
      rentPayer: this.relayer.publicKey,
    };
  }

  /** The relayer opens the escrow of a new execution. */
  async openEscrow(agent: AgentFixture, payer: Wallet, task = "summarize"): Promise<OpenedEscrow> {
    const executionId = randomId();
    const hash = requestHash(task, { text: "Hello, world!" });
    const signature = await this.sendAsRelayer([this.openEscrowInstruction(agent, payer, executionId, hash)]);
    return { executionId, ref: this.escrowRef(agent, payer, executionId), requestHash: hash, signature };
  }

  /**
   * `[Ed25519 verification, settle_batch]` settling one open escrow, the result signed by
   * `signing` (the agent's key unless given) over the v2 result digest the program rebuilds from
   * the escrow account (its nonce, payer, token account and amount) and the item.
   */
  async settleInstructions(
    executionId: Uint8Array,
    options: { signing: Keypair; feeShardIndex?: number; output?: unknown; units?: bigint },
  ): Promise<TransactionInstruction[]> {
    const escrow = await fetchEscrow(this.connection, escrowPda(executionId, this.programId), { programId: this.programId });
    assert.ok(escrow, "the escrow is open");
    const agent = await fetchAgent(this.connection, escrow.agent, { programId: this.programId });
    assert.ok(agent);
    const item = { resultHash: outputHash(options.output ?? { summary: "Hi." }), units: options.units ?? 0n };
    const digest = resultDigest({ escrow, ...item });
    return settleBatchInstructions({
      programId: this.programId,
      relayer: this.relayer.publicKey,
      usdcMint: this.usdcMint,
      agent: escrow.agent,
      payoutAccount: agent.payoutAccount,
      escrows: [escrow],
      items: [item],
      feeShardIndex: options.feeShardIndex ?? 0,
      signingKey: options.signing.publicKey.toBytes(),
      signed: { kind: "call", signature: ed25519Sign(options.signing, digest) },
    });
  }

  /**
   * Settles the escrow as the relayer does a lone result: a settle_batch of one into the agent's
   * receipt log, which its creator paid at registration.
   */
  async settle(escrow: OpenedEscrow, agent: AgentFixture, feeShardIndex = 0): Promise<string> {
    return this.sendAsRelayer(await this.settleInstructions(escrow.executionId, { signing: agent.signing, feeShardIndex }));
  }

  refundInstruction(escrow: OpenedEscrow, reason: RefundReason, withSubscription = false) {
    return refundInstruction({ programId: this.programId, relayer: this.relayer.publicKey, usdcMint: this.usdcMint, escrow: escrow.ref, reason, withSubscription });
  }

  reclaimInstruction(escrow: OpenedEscrow, withSubscription = false) {
    return reclaimInstruction({ programId: this.programId, usdcMint: this.usdcMint, escrow: escrow.ref, withSubscription });
  }

  subscribeInstruction(agent: AgentFixture, payer: Wallet, feeShardIndex = 0, maxAmountUsdc: bigint = NO_MAXIMUM_USDC) {
    return subscribeInstruction({
      programId: this.programId,
      relayer: this.relayer.publicKey,
      usdcMint: this.usdcMint,
      agent: agent.address,
      payer: payer.wallet.publicKey,
      payerTokenAccount: payer.tokenAccount,
      payoutAccount: agent.payoutAccount,
      feeShardIndex,
      maxAmountUsdc,
    });
  }
}

/** Anchor logs "… Error Code: <name>. Error Number: <code>. Error Message: <msg>." for a custom error. */
export function assertAnchorErrorLogged(logs: readonly string[], name: AgentMarketErrorName): void {
  const info = AGENT_MARKET_ERRORS.find((e) => e.name === name)!;
  const expected = `Error Code: ${name}. Error Number: ${info.code}. Error Message: ${info.msg}.`;
  assert.ok(
    logs.some((line) => line.startsWith("Program log: AnchorError") && line.includes(expected)),
    `logs carry "${expected}":\n${logs.join("\n")}`,
  );
}
