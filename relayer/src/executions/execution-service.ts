// Executing an agent (DESIGN.md §1): checks, open_escrow, the creator's POST /execute, the result
// verified, then settle (or refund), each step a committed state of the execution's row before the
// chain or the creator is touched. Any relayer can finish any execution from its row: a restart
// rebroadcasts the recorded transaction, re-signs only once it can no longer land, and so ends
// every execution settled or refunded exactly once. The program, not this code, fixes amounts.
import { createHash, randomBytes } from "node:crypto";

import {
  canonicalJson,
  decodeAgent,
  decodeEscrow,
  decodeSubscription,
  errorFromCode,
  escrowPda,
  FEE_SHARD_COUNT,
  formatExecutionId,
  LruMap,
  openEscrowInstruction,
  refundInstruction,
  requestHash,
  settleInstructions,
  splitPayment,
  subscribeInstruction,
  subscriptionPda,
  toHex,
  delegatePda,
  type Agent,
  type CreatorExecuteRequest,
  type RefundReason,
} from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { getAssociatedTokenAddressSync, unpackAccount } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";

import type { AuthenticatedKey } from "../auth/api-keys.js";
import type { ChainService } from "../chain/chain-service.js";
import type { AccountData } from "../chain/rpc-client.js";
import type { SignedTransaction, TransactionSender } from "../chain/tx-sender.js";
import type { NetworkName } from "../config.js";
import type { CreatorClient, CreatorFailure } from "../creator/creator-client.js";
import { runStatement, type Db, type Statement } from "../db/pool.js";
import { ApiError, type ErrorCode } from "../errors.js";
import type { JobQueue } from "../jobs/job-queue.js";
import { validateAgainst } from "../listings/json-schema.js";
import type { ListingForExecution, ListingService } from "../listings/listing-service.js";
import { formatUsdc } from "../usdc.js";
import { completeExecutions, ConfirmationTracker } from "./confirmations.js";
import { EMPTY_ROW, renderExecution, type ExecutionRow } from "./execution-view.js";
import { ExecutionWrites, insertValues, RESERVE_AND_INSERT, type NewExecution, type SettleRecord } from "./execution-writes.js";

const bs58 = utils.bytes.bs58;

/** Longest task accepted, in characters. */
export const MAX_TASK_CHARS = 20_000;
/** Time kept before the escrow deadline for settle to land. */
const SETTLE_MARGIN_MS = 5_000;
/** When the finish job first looks at an execution whose transaction's fate is unknown. */
const FINISH_RETRY_MS = 400;
/** How long a sent open_escrow is awaited before the finish job takes the execution over. */
const ESCROW_WAIT_MS = 5_000;
const ESCROW_POLL_MS = 200;
/** About a slot: a processed transaction is confirmed a slot later. */
const CONFIRMATION_POLL_MS = 100;
/** A settle or refund not confirmed by then is the finish job's (rebroadcast, re-sign). */
const CONFIRMATION_HANDOVER_MS = 20_000;

export type ExecutionState = "opening" | "running" | "settling" | "refunding" | "settled" | "refunded" | "failed";

export interface ExecuteInput {
  key: AuthenticatedKey;
  agent: string;
  task: string;
  parameters: Record<string, unknown>;
  idempotency_key?: string;
  mode: "sync" | "async";
}

export interface ExecuteOutcome {
  status: number;
  body: unknown;
  replayed: boolean;
}

export interface ExecutionOptions {
  instance_id: string;
  creator_max_response_bytes: number;
  /** An instance whose heartbeat is older than this is taken for dead. */
  instance_timeout_secs: number;
}

interface Quote {
  amount_usdc: bigint;
  uses_subscription: boolean;
  /** The agent account the quote read. */
  agent: Agent;
}

/** What the open escrow tells, recorded with the execution's next step. */
type EscrowFacts = Pick<ExecutionRow, "amount_usdc" | "escrow_deadline" | "escrow_opened_at" | "creator_started_at">;

/** What an execution already read, handed on so it is not read twice. */
interface ExecutionContext {
  agent: Agent;
  listing: ListingForExecution;
}

const TOKEN_ACCOUNT_MEMO_ENTRIES = 10_000;

const FAILURES: Record<CreatorFailure, { reason: RefundReason; code: ErrorCode }> = {
  timeout: { reason: "Timeout", code: "creator_timeout" },
  unreachable: { reason: "CreatorError", code: "creator_error" },
  endpoint_not_allowed: { reason: "CreatorError", code: "creator_error" },
  http_error: { reason: "CreatorError", code: "creator_error" },
  response_too_large: { reason: "CreatorError", code: "creator_error" },
  invalid_response: { reason: "OutputInvalid", code: "invalid_result" },
  bad_signature: { reason: "InvalidSignature", code: "invalid_result" },
  output_invalid: { reason: "OutputInvalid", code: "invalid_result" },
};

const COLUMNS = "*";

export class ExecutionService {
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly tokenAccounts = new LruMap<string, PublicKey>(TOKEN_ACCOUNT_MEMO_ENTRIES);
  private readonly confirmations: ConfirmationTracker;
  private readonly advanceStatements = new Map<string, Statement>();
  private readonly writes: ExecutionWrites;

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly senders: Partial<Record<NetworkName, TransactionSender>>,
    private readonly listings: ListingService,
    private readonly creators: CreatorClient,
    private readonly jobs: JobQueue,
    private readonly options: ExecutionOptions,
  ) {
    this.writes = new ExecutionWrites(db);
    this.confirmations = new ConfirmationTracker(db, senders, (id) => jobs.add("finish", id), {
      poll_ms: CONFIRMATION_POLL_MS,
      handover_after_ms: CONFIRMATION_HANDOVER_MS,
    });
  }

  /** Registers this instance and keeps its heartbeat, by which others know its executions are cared for. */
  async startInstance(): Promise<void> {
    const beat = () =>
      this.db.query(
        `INSERT INTO relayer_instances (id) VALUES ($1)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = clock_timestamp()`,
        [this.options.instance_id],
      );
    await beat();
    this.heartbeat = setInterval(() => void beat().catch(() => undefined), 1_000);
    this.heartbeat.unref();
  }

  stopInstance(): void {
    clearInterval(this.heartbeat);
  }

  /** Hands the settlements still waiting for their confirmation to the finish job. */
  close(): Promise<void> {
    return this.confirmations.close();
  }

  private sender(network: NetworkName): TransactionSender {
    const sender = this.senders[network];
    if (!sender) throw new ApiError("network_not_configured", `This relayer does not serve ${network}.`, undefined, { network });
    return sender;
  }

  // -------------------------------------------------------------------------------------------
  // Starting an execution

  async execute(input: ExecuteInput): Promise<ExecuteOutcome> {
    const { key } = input;
    const network = key.network;
    const sender = this.sender(network);
    const fingerprint =
      input.idempotency_key === undefined
        ? null
        : createHash("sha256")
            .update(canonicalJson({ network, agent: input.agent, task: input.task, parameters: input.parameters }))
            .digest();
    if (input.idempotency_key !== undefined) {
      const replay = await this.replay(key.id, input.idempotency_key, fingerprint!);
      if (replay) return replay;
    }

    const listing = await this.listing(network, input.agent);
    const violation = validateAgainst(listing.input_schema, input.parameters);
    if (violation) {
      const path = violation.path.split("/").slice(1).join(".");
      throw new ApiError(
        "validation_failed",
        `parameters${path ? `.${path}` : ""} ${violation.message}.`,
        `parameters${path ? `.${path}` : ""}`,
      );
    }

    const agentAddress = new PublicKey(input.agent);
    const wallet = new PublicKey(key.wallet);
    const market = await this.chain.market(network);
    const payerTokenAccount = this.tokenAccount(market.usdcMint, wallet);
    const quote = await this.quote(network, agentAddress, wallet, payerTokenAccount, market.usdcMint);

    const executionId = randomBytes(16);
    const id = formatExecutionId(executionId);
    const hash = requestHash(input.task, input.parameters);
    const escrow_tx =
      input.mode === "sync"
        ? await sender.sign([
            openEscrowInstruction({
              relayer: sender.signer.publicKey,
              usdcMint: market.usdcMint,
              agent: agentAddress,
              payer: wallet,
              payerTokenAccount,
              executionId,
              apiKeyId: keyIdBytes(key.id),
              requestHash: hash,
              maxAmountUsdc: quote.amount_usdc,
            }),
          ])
        : null;
    const execution: NewExecution = {
      id,
      api_key_id: key.id,
      wallet: key.wallet,
      network,
      agent: input.agent,
      mode: input.mode,
      owner: input.mode === "sync" ? this.options.instance_id : null,
      task: input.task,
      parameters: input.parameters,
      request_hash: Buffer.from(hash),
      payer_token_account: payerTokenAccount.toBase58(),
      used_subscription: quote.uses_subscription,
      quoted_usdc: quote.amount_usdc.toString(),
      escrow_tx,
    };
    let created_at: Date | undefined;
    if (input.idempotency_key === undefined) {
      created_at = await this.writes.insert(execution);
    } else {
      const claim = await this.claimAndInsert(execution, input.idempotency_key, fingerprint!);
      // Replayed once the connection is back in the pool: fifty duplicates holding theirs while
      // waiting for another would exhaust it.
      if (!claim.claimed) {
        return (await this.replay(key.id, input.idempotency_key, fingerprint!)) ?? { status: 409, body: null, replayed: false };
      }
      created_at = claim.created_at;
    }
    if (!created_at) {
      throw new ApiError("spending_cap_reached", undefined, undefined, {
        spending_cap_usdc: key.spending_cap_usdc === null ? null : formatUsdc(key.spending_cap_usdc),
        required_usdc: formatUsdc(quote.amount_usdc),
      });
    }
    const row: ExecutionRow = { ...EMPTY_ROW, ...execution, state: "opening", created_at };

    if (input.mode === "async") {
      await this.jobs.add("execute", id);
      return { status: 202, body: renderExecution(row), replayed: false };
    }
    return this.run(row, { agent: quote.agent, listing });
  }

  /**
   * Claims the Idempotency-Key for `execution` and inserts it: one transaction, as the claim must
   * vanish if the key's spending cap refuses the execution. Not claimed: another request has it.
   */
  private async claimAndInsert(
    execution: NewExecution,
    idempotency_key: string,
    fingerprint: Buffer,
  ): Promise<{ claimed: false } | { claimed: true; created_at: Date | undefined }> {
    const client = await this.db.connect();
    try {
      await client.query("BEGIN");
      const claimed = await client.query(
        `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, execution_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING`,
        [execution.api_key_id, idempotency_key, fingerprint, execution.id],
      );
      if (claimed.rowCount === 0) {
        await client.query("ROLLBACK");
        return { claimed: false };
      }
      const created_at = (await client.query<{ created_at: Date }>(RESERVE_AND_INSERT.text, insertValues(execution))).rows[0]?.created_at;
      await client.query(created_at ? "COMMIT" : "ROLLBACK");
      return { claimed: true, created_at };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** The first response again for a known Idempotency-Key, or null if the key is new. */
  private async replay(api_key_id: string, idempotency_key: string, fingerprint: Buffer): Promise<ExecuteOutcome | null> {
    const { rows } = await this.db.query<{ fingerprint: Buffer; execution_id: string }>(
      "SELECT fingerprint, execution_id FROM idempotency_keys WHERE api_key_id = $1 AND key = $2",
      [api_key_id, idempotency_key],
    );
    const claim = rows[0];
    if (!claim) return null;
    if (!claim.fingerprint.equals(fingerprint)) throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    const row = await this.row(claim.execution_id);
    if (row.mode === "async") return { status: 202, body: renderExecution(row), replayed: true };
    if (row.state === "opening" || row.state === "running") {
      throw new ApiError("idempotency_request_in_progress", undefined, "Idempotency-Key", { execution_id: row.id });
    }
    return { ...this.outcome(row), replayed: true };
  }

  private async listing(network: NetworkName, agent: string): Promise<ListingForExecution> {
    const listing = await this.listings.forExecution(network, agent);
    if (!listing || listing.status === "retired") {
      throw new ApiError("resource_not_found", `No agent ${agent} on ${network}.`, "agent_id");
    }
    if (listing.status !== "active") throw new ApiError("agent_unavailable", `Agent ${agent} is paused by its creator.`);
    return listing;
  }

  /** The wallet's associated USDC account; deriving it costs more than the rest of the quote. */
  private tokenAccount(usdcMint: PublicKey, wallet: PublicKey): PublicKey {
    return this.tokenAccounts.getOrSet(`${usdcMint.toBase58()}/${wallet.toBase58()}`, () =>
      getAssociatedTokenAddressSync(usdcMint, wallet, true),
    );
  }

  /**
   * What the program will charge for the call, from the same accounts it reads, and a 402 when
   * the wallet cannot cover it. One getMultipleAccounts call; nothing is sent.
   */
  private async quote(
    network: NetworkName,
    agentAddress: PublicKey,
    wallet: PublicKey,
    payerTokenAccount: PublicKey,
    usdcMint: PublicKey,
  ): Promise<Quote> {
    let infos;
    try {
      infos = await this.chain
        .rpc(network)
        .getMultipleAccounts([agentAddress, payerTokenAccount, subscriptionPda(agentAddress, wallet)], "processed");
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer: ${(error as Error).message}`);
    }
    const [agentInfo, tokenInfo, subscriptionInfo] = infos;
    if (!agentInfo) throw new ApiError("resource_not_found", `No agent account ${agentAddress.toBase58()} on ${network}.`, "agent_id");
    const agent = decodeAgent(agentInfo.data);
    if (agent.status !== "Active") throw new ApiError("agent_unavailable", "The agent is retired on-chain.");
    const now = Math.floor(Date.now() / 1000);
    const subscription = subscriptionInfo ? decodeSubscription(subscriptionInfo.data) : null;
    const active = subscription !== null && now < Number(subscription.expiresAt);
    let amount_usdc: bigint;
    let uses_subscription = false;
    switch (agent.pricing.kind) {
      case "PayPerUse":
        amount_usdc = agent.pricing.priceUsdc;
        break;
      case "Subscription":
        if (!active) {
          throw new ApiError("subscription_required", undefined, undefined, {
            network,
            period_price_usdc: formatUsdc(agent.pricing.periodPriceUsdc),
            subscribe: `POST /v1/agents/${agentAddress.toBase58()}/subscription`,
          });
        }
        amount_usdc = 0n;
        uses_subscription = true;
        break;
      case "Hybrid":
        if (active && subscription!.includedCallsRemaining > 0) {
          amount_usdc = 0n;
          uses_subscription = true;
        } else {
          amount_usdc = agent.pricing.overagePriceUsdc;
        }
        break;
    }
    const token = tokenInfo
      ? unpackAccount(payerTokenAccount, { ...tokenInfo, owner: new PublicKey(tokenInfo.owner), executable: false })
      : null;
    const balance = token?.amount ?? 0n;
    const allowance = token?.delegate?.equals(delegatePda()) ? token.delegatedAmount : 0n;
    const shortfall = (code: "insufficient_balance" | "insufficient_allowance") =>
      new ApiError(code, undefined, undefined, {
        network,
        wallet: wallet.toBase58(),
        mint: usdcMint.toBase58(),
        token_account: payerTokenAccount.toBase58(),
        delegate: delegatePda().toBase58(),
        required_usdc: formatUsdc(amount_usdc),
        balance_usdc: formatUsdc(balance),
        allowance_usdc: formatUsdc(allowance),
        raise_allowance:
          "Sign in with the wallet and POST /v1/wallet/allowance {\"network\":\"" + network + "\"}, then sign and send the returned transaction.",
      });
    if (balance < amount_usdc) throw shortfall("insufficient_balance");
    if (allowance < amount_usdc) throw shortfall("insufficient_allowance");
    return { amount_usdc, uses_subscription, agent };
  }

  /**
   * Buys the wallet a period of the agent's subscription: `subscribe`, signed by the relayer,
   * pays the period price through the wallet's delegate approval, split 99/1 at once.
   */
  async subscribe(key: AuthenticatedKey, agent: string): Promise<unknown> {
    const network = key.network;
    const sender = this.sender(network);
    await this.listing(network, agent);
    const agentAddress = new PublicKey(agent);
    const wallet = new PublicKey(key.wallet);
    const market = await this.chain.market(network);
    const payerTokenAccount = getAssociatedTokenAddressSync(market.usdcMint, wallet, true);
    const connection = this.chain.connection(network);
    let infos;
    try {
      infos = await connection.getMultipleAccountsInfo([agentAddress, payerTokenAccount]);
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer: ${(error as Error).message}`);
    }
    if (!infos[0]) throw new ApiError("resource_not_found", `No agent account ${agent} on ${network}.`, "agent_id");
    const onChain = decodeAgent(infos[0].data);
    if (onChain.pricing.kind === "PayPerUse") throw new ApiError("subscription_not_offered");
    const price = onChain.pricing.periodPriceUsdc;
    const token = infos[1] ? unpackAccount(payerTokenAccount, infos[1], infos[1].owner) : null;
    const balance = token?.amount ?? 0n;
    const allowance = token?.delegate?.equals(delegatePda()) ? token.delegatedAmount : 0n;
    if (balance < price || allowance < price) {
      throw new ApiError(balance < price ? "insufficient_balance" : "insufficient_allowance", undefined, undefined, {
        network,
        wallet: wallet.toBase58(),
        mint: market.usdcMint.toBase58(),
        required_usdc: formatUsdc(price),
        balance_usdc: formatUsdc(balance),
        allowance_usdc: formatUsdc(allowance),
      });
    }
    const signed = await sender.sign([
      subscribeInstruction({
        relayer: sender.signer.publicKey,
        usdcMint: market.usdcMint,
        agent: agentAddress,
        payer: wallet,
        payerTokenAccount,
        payoutAccount: onChain.payoutAccount,
        feeShardIndex: anyFeeShard(),
        maxAmountUsdc: price,
      }),
    ]);
    const sent = await sender.send(signed);
    if (sent.kind === "rejected") {
      if (feePayerShort(sent)) throw new ApiError("relayer_underfunded", undefined, undefined, { network });
      throw new ApiError("escrow_rejected", `subscribe was refused: ${errorFromLogs(sent.message) ?? sent.message}`);
    }
    if (sent.kind === "unknown") {
      throw new ApiError("chain_unavailable", undefined, undefined, { transaction: signed.signature });
    }
    const info = await connection.getAccountInfo(subscriptionPda(agentAddress, wallet), "processed");
    const subscription = decodeSubscription(info!.data);
    const { creatorShareUsdc, feeUsdc } = splitPayment(price);
    return {
      object: "subscription",
      agent,
      wallet: wallet.toBase58(),
      network,
      expires_at: new Date(Number(subscription.expiresAt) * 1000).toISOString(),
      included_calls_remaining: subscription.includedCallsRemaining,
      charge: {
        amount_usdc: formatUsdc(price),
        creator_share_usdc: formatUsdc(creatorShareUsdc),
        fee_usdc: formatUsdc(feeUsdc),
        currency: "USDC",
      },
      transaction: signed.signature,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Driving an execution

  /** Runs an execution this instance owns to its answer. */
  private async run(row: ExecutionRow, context?: ExecutionContext): Promise<ExecuteOutcome> {
    const opened = await this.openEscrow(row);
    row = opened.row;
    if (opened.escrow) {
      if (row.mode === "async") {
        // Its caller polls for it: `running` is worth a write.
        row = await this.advance(row, "running", opened.escrow);
        if (row.state === "running") row = await this.callCreator(row, {}, context);
      } else {
        // Its caller waits on this very request: the escrow's facts are written with the result,
        // a commit fewer. A crash meanwhile leaves `opening`, which the finish job refunds alike.
        row = await this.callCreator({ ...row, ...opened.escrow }, opened.escrow, context);
      }
    }
    if (row.state === "settling" || row.state === "refunding") row = await this.sendFinal(row);
    else await this.jobs.add("finish", row.id, FINISH_RETRY_MS).catch(() => undefined);
    return this.outcome(row);
  }

  /** An async execution's job: takes it over, then runs it like a sync one. */
  async runAsync(id: string): Promise<void> {
    const taken = await this.db.query(
      "UPDATE executions SET owner = $2, updated_at = clock_timestamp() WHERE id = $1 AND state = 'opening' AND escrow_tx IS NULL",
      [id, this.options.instance_id],
    );
    if (taken.rowCount === 0) return this.finish(id);
    const row = await this.row(id);
    const sender = this.sender(row.network);
    const market = await this.chain.market(row.network);
    const escrow_tx = await sender.sign([
      openEscrowInstruction({
        relayer: sender.signer.publicKey,
        usdcMint: market.usdcMint,
        agent: new PublicKey(row.agent),
        payer: new PublicKey(row.wallet),
        payerTokenAccount: new PublicKey(row.payer_token_account),
        executionId: executionIdBytes(row.id),
        apiKeyId: keyIdBytes(row.api_key_id),
        requestHash: row.request_hash,
        maxAmountUsdc: BigInt(row.quoted_usdc),
      }),
    ]);
    await this.run(await this.advance(row, "opening", { escrow_tx }));
  }

  private async openEscrow(row: ExecutionRow): Promise<{ row: ExecutionRow; escrow: EscrowFacts | null }> {
    const sender = this.sender(row.network);
    const sending = sender.send(row.escrow_tx!);
    // Asked in the same turn, the read travels in the send's JSON-RPC batch, right behind it: a
    // node that runs a batch in order answers with the escrow the transaction just opened.
    const read = this.readEscrow(row);
    const sent = await sending;
    if (sent.kind === "processed") return { row, escrow: await this.awaitEscrow(row, await read) };
    if (sent.kind === "rejected") {
      if (feePayerShort(sent)) {
        const message = "open_escrow was refused: the relayer's SOL ran short. Nothing was charged; retry later.";
        return { row: await this.fail(row, "relayer_underfunded", message), escrow: null };
      }
      const program = errorFromLogs(sent.message);
      const code: ErrorCode =
        program === "InsufficientBalance"
          ? "insufficient_balance"
          : program === "InsufficientAllowance"
            ? "insufficient_allowance"
            : program === "SubscriptionRequired"
              ? "subscription_required"
              : "escrow_rejected";
      return { row: await this.fail(row, code, `open_escrow was refused: ${program ?? sent.message}`), escrow: null };
    }
    // Unknown: the recorded transaction is left to the finish job, which rebroadcasts it until
    // it lands (then refunds) or expires (then nothing was charged).
    return { row, escrow: null };
  }

  /**
   * The open escrow's facts (the amount the program took, the deadline it set), or null if it
   * cannot be seen yet. A cluster runs a transaction a little after accepting it: the escrow is
   * awaited a while, then left to the finish job.
   */
  private async awaitEscrow(row: ExecutionRow, known?: AccountData | null): Promise<EscrowFacts | null> {
    let info = known === undefined ? await this.readEscrow(row) : known;
    for (let waited_ms = 0; !info && waited_ms < ESCROW_WAIT_MS; waited_ms += ESCROW_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, ESCROW_POLL_MS));
      info = await this.readEscrow(row);
    }
    if (!info) return null;
    const escrow = decodeEscrow(info.data);
    const now = new Date();
    return {
      amount_usdc: escrow.amountUsdc.toString(),
      escrow_deadline: new Date(Number(escrow.deadline) * 1000),
      escrow_opened_at: now,
      creator_started_at: now,
    };
  }

  /** The execution's escrow account at `processed`; null if absent or the RPC did not answer. */
  private readEscrow(row: ExecutionRow): Promise<AccountData | null> {
    return this.chain
      .rpc(row.network)
      .getMultipleAccounts([escrowPda(executionIdBytes(row.id))], "processed")
      .then(([info]) => info ?? null, () => null);
  }

  /** Calls the creator, then records the settle or refund (with `unrecorded`, facts not yet written). */
  private async callCreator(row: ExecutionRow, unrecorded: Partial<ExecutionRow>, context?: ExecutionContext): Promise<ExecutionRow> {
    const listing = context?.listing ?? (await this.listings.forExecution(row.network, row.agent));
    let agent = context?.agent;
    if (!agent) {
      const [info] = await this.chain.rpc(row.network).getMultipleAccounts([new PublicKey(row.agent)], "processed");
      agent = decodeAgent(info!.data);
    }
    if (!listing) {
      return this.startRefund(row, "CreatorError", "creator_error", "the agent's listing is gone", {
        ...unrecorded,
        creator_finished_at: new Date(),
      });
    }
    const deadline_ms = row.escrow_deadline!.getTime();
    const timeout_ms = Math.max(
      0,
      Math.min(agent.maxExecutionSecs * 1000, deadline_ms - SETTLE_MARGIN_MS - Date.now()),
    );
    const request: CreatorExecuteRequest = {
      execution_id: row.id,
      agent: row.agent,
      network: row.network,
      task: row.task,
      parameters: row.parameters,
      request_hash: toHex(row.request_hash),
      deadline: new Date(deadline_ms).toISOString(),
    };
    const outcome = await this.creators.call({
      endpoint: agent.endpoint,
      request,
      signing_key: agent.signingKey,
      output_schema: listing.output_schema,
      timeout_ms,
      max_response_bytes: this.options.creator_max_response_bytes,
    });
    const finished = { ...unrecorded, creator_finished_at: new Date() };
    if (!outcome.ok) {
      const failure = FAILURES[outcome.failure];
      return this.startRefund(row, failure.reason, failure.code, outcome.message, finished);
    }
    const market = await this.chain.market(row.network);
    const sender = this.sender(row.network);
    const fee_shard = anyFeeShard();
    const settle_tx = await sender.sign(
      settleInstructions({
        relayer: sender.signer.publicKey,
        usdcMint: market.usdcMint,
        escrow: this.escrowRef(row, sender),
        payoutAccount: agent.payoutAccount,
        resultHash: outcome.result_hash,
        feeShardIndex: fee_shard,
        requestHash: row.request_hash,
        signingKey: agent.signingKey,
        signature: outcome.signature,
      }),
    );
    const record: SettleRecord = {
      ...finished,
      output: outcome.output,
      result_hash: Buffer.from(outcome.result_hash),
      result_digest: Buffer.from(outcome.digest),
      creator_signature: Buffer.from(outcome.signature),
      signing_key: bs58.encode(agent.signingKey),
      payout_account: agent.payoutAccount.toBase58(),
      fee_shard,
      settle_tx,
    };
    if (await this.writes.settle(row.id, row.state, record)) return { ...row, ...record, state: "settling" };
    return this.row(row.id);
  }

  private async startRefund(
    row: ExecutionRow,
    reason: RefundReason,
    code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
  ): Promise<ExecutionRow> {
    const refund_tx = await this.signRefund(row, reason);
    return this.advance(row, "refunding", {
      ...extra,
      refund_tx,
      refund_reason: reason,
      failure_code: code,
      failure_message: message,
    });
  }

  private async signRefund(row: ExecutionRow, reason: RefundReason): Promise<SignedTransaction> {
    const sender = this.sender(row.network);
    const market = await this.chain.market(row.network);
    return sender.sign([
      refundInstruction({
        relayer: sender.signer.publicKey,
        usdcMint: market.usdcMint,
        escrow: this.escrowRef(row, sender),
        reason,
        withSubscription: row.used_subscription,
      }),
    ]);
  }

  /**
   * Sends the recorded settle or refund; a settle the program refuses turns into a refund. Once
   * processed, the caller has its answer and the tracker waits for the confirmation. A settle
   * refused only because the relayer's SOL ran short is not the creator's fault: it stays, and the
   * finish job sends it again (re-signed as needed) until the escrow's deadline nears.
   */
  private async sendFinal(row: ExecutionRow): Promise<ExecutionRow> {
    const sender = this.sender(row.network);
    let sent = await sender.send(row.state === "settling" ? row.settle_tx! : row.refund_tx!);
    if (sent.kind === "rejected" && row.state === "settling" && !feePayerShort(sent)) {
      const program = errorFromLogs(sent.message);
      const timedOut = program === "EscrowExpired";
      row = await this.startRefund(
        row,
        timedOut ? "Timeout" : "RelayerError",
        timedOut ? "creator_timeout" : "invalid_result",
        `settle was refused: ${program ?? sent.message}`,
      );
      sent = await sender.send(row.refund_tx!);
    }
    const finished_at = new Date();
    if (sent.kind === "processed" && (row.state === "settling" || row.state === "refunding")) {
      const tx = row.state === "settling" ? row.settle_tx! : row.refund_tx!;
      this.confirmations.watch({ id: row.id, network: row.network, state: row.state, signature: tx.signature, finished_at });
    } else {
      await this.jobs.add("finish", row.id, FINISH_RETRY_MS).catch(() => undefined);
    }
    return { ...row, finished_at };
  }

  /**
   * Moves an execution on from wherever it stands; safe to run again and from any instance. Throws
   * while it still waits on the chain, so the job is retried.
   */
  async finish(id: string): Promise<void> {
    const row = await this.row(id);
    const sender = this.sender(row.network);
    switch (row.state) {
      case "settled":
      case "refunded":
      case "failed":
        return;
      case "opening": {
        if (!row.escrow_tx) {
          if (row.mode === "async") return this.runAsync(id);
          await this.fail(row, "internal_error", "the execution stopped before its escrow was signed");
          return;
        }
        const state = await sender.state(row.escrow_tx);
        if (state.kind === "landed" && state.err === null) {
          const escrow = await this.awaitEscrow(row);
          if (escrow) await this.refundAbandoned(row, escrow);
          throw new Error("escrow refund under way");
        }
        if (state.kind === "landed" || state.kind === "expired") {
          await this.fail(row, "escrow_rejected", state.kind === "expired" ? "open_escrow never landed" : "open_escrow failed on chain");
          return;
        }
        await sender.send(row.escrow_tx);
        throw new Error("open_escrow not landed yet");
      }
      case "running":
        await this.refundAbandoned(row);
        throw new Error("refund under way");
      case "settling":
      case "refunding": {
        const tx = row.state === "settling" ? row.settle_tx! : row.refund_tx!;
        const state = await sender.state(tx);
        if (state.kind === "landed" && state.err === null) {
          if (state.confirmation === "processed") throw new Error("waiting for confirmation");
          await this.complete(row, row.state === "settling" ? "settled" : "refunded");
          return;
        }
        if (state.kind === "pending") {
          await sender.send(tx);
          throw new Error("not landed yet");
        }
        // Expired unlanded, or landed with an error: sign anew. A settle whose escrow deadline is
        // near or past becomes a refund; an escrow already closed (reclaimed by its payer) is done.
        const escrow = await this.chain.connection(row.network).getAccountInfo(escrowPda(executionIdBytes(row.id)), "confirmed");
        if (!escrow) {
          await this.complete(row, "refunded");
          return;
        }
        if (row.state === "settling" && row.escrow_deadline!.getTime() - SETTLE_MARGIN_MS > Date.now() && state.kind === "expired") {
          const resigned = await sender.sign(
            resignSettle(row, await this.chain.market(row.network).then((m) => m.usdcMint), sender, this.escrowRef(row, sender)),
          );
          const next = await this.advance(row, "settling", { settle_tx: resigned });
          await sender.send(next.settle_tx!);
        } else if (row.state === "settling") {
          const next = await this.startRefund(row, "Timeout", "creator_timeout", "settle could not land before the escrow deadline");
          await sender.send(next.refund_tx!);
        } else {
          const next = await this.advance(row, "refunding", { refund_tx: await this.signRefund(row, row.refund_reason as RefundReason) });
          await sender.send(next.refund_tx!);
        }
        throw new Error("re-signed");
      }
    }
  }

  /**
   * An execution with an open escrow whose caller is gone (its relayer died): the result is
   * lost, refund. `escrow`: the escrow's facts when the row does not hold them yet.
   */
  private async refundAbandoned(row: ExecutionRow, escrow: Partial<ExecutionRow> = {}): Promise<void> {
    const next = await this.startRefund(
      row,
      "RelayerError",
      "creator_error",
      "the relayer stopped before the creator's result was recorded",
      escrow,
    );
    await this.sender(row.network).send(next.refund_tx!);
  }

  /**
   * The settle or refund is confirmed (or the payer reclaimed the escrow): the execution is final
   * and the key's usage exact.
   */
  private complete(row: ExecutionRow, final: "settled" | "refunded"): Promise<void> {
    return completeExecutions(this.db, [{ id: row.id, from: row.state as "settling" | "refunding", final, finished_at: null }]);
  }

  /** No escrow opened: nothing charged; the reservation on the key is released. */
  private async fail(row: ExecutionRow, code: ErrorCode, message: string): Promise<ExecutionRow> {
    const client = await this.db.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<ExecutionRow>(
        `UPDATE executions SET state = 'failed', failure_code = $2, failure_message = $3, finished_at = clock_timestamp(),
           updated_at = clock_timestamp() WHERE id = $1 AND state = 'opening' RETURNING ${COLUMNS}`,
        [row.id, code, message],
      );
      if (rows.length === 1) {
        await client.query(
          "UPDATE api_keys SET spent_usdc = spent_usdc - $2, execution_count = execution_count - 1 WHERE id = $1",
          [row.api_key_id, row.quoted_usdc],
        );
        // A failure on our side that a retry can cure frees the Idempotency-Key, or the retry
        // the 503 invites would only replay the failure.
        if (code === "relayer_underfunded") {
          await client.query("DELETE FROM idempotency_keys WHERE api_key_id = $1 AND execution_id = $2", [row.api_key_id, row.id]);
        }
      }
      await client.query("COMMIT");
      return rows[0] ?? (await this.row(row.id));
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Finishes the executions of dead instances, and settlements and refunds left waiting on the
   * chain longer than a live instance's tracker waits for them.
   */
  async sweep(): Promise<void> {
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT e.id FROM executions e LEFT JOIN relayer_instances i ON i.id = e.owner
       WHERE e.state IN ('opening', 'running', 'settling', 'refunding')
         AND ((e.owner IS NOT NULL OR e.mode = 'sync' OR e.state IN ('settling', 'refunding'))
              AND (i.id IS NULL OR i.heartbeat_at < clock_timestamp() - make_interval(secs => $1))
              OR e.state IN ('settling', 'refunding') AND e.updated_at < clock_timestamp() - make_interval(secs => $2))
         AND e.updated_at < clock_timestamp() - interval '1 second'
       LIMIT 500`,
      [this.options.instance_timeout_secs, CONFIRMATION_HANDOVER_MS / 1000 + 10],
    );
    for (const { id } of rows) await this.jobs.add("finish", id);
    await this.db.query("DELETE FROM idempotency_keys WHERE created_at < clock_timestamp() - interval '48 hours'");
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  async get(wallet: string, id: string): Promise<unknown> {
    const { rows } = await this.db.query<ExecutionRow>(`SELECT ${COLUMNS} FROM executions WHERE id = $1 AND wallet = $2`, [id, wallet]);
    if (!rows[0]) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return renderExecution(rows[0]);
  }

  async list(
    wallet: string,
    page: { limit: number; starting_after?: string; agent?: string },
  ): Promise<{ data: unknown[]; has_more: boolean }> {
    const params: unknown[] = [wallet, page.limit + 1];
    const where = ["wallet = $1"];
    if (page.agent !== undefined) {
      params.push(page.agent);
      where.push(`agent = $${params.length}`);
    }
    if (page.starting_after !== undefined) {
      const cursor = await this.db.query<{ created_at: Date }>("SELECT created_at FROM executions WHERE id = $1 AND wallet = $2", [
        page.starting_after,
        wallet,
      ]);
      if (!cursor.rows[0]) throw new ApiError("invalid_cursor", undefined, "starting_after");
      params.push(cursor.rows[0].created_at, page.starting_after);
      where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
    }
    const { rows } = await this.db.query<ExecutionRow>(
      `SELECT ${COLUMNS} FROM executions WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT $2`,
      params,
    );
    return { data: rows.slice(0, page.limit).map(renderExecution), has_more: rows.length > page.limit };
  }

  /** The HTTP answer an execution's current row gives. */
  private outcome(row: ExecutionRow): ExecuteOutcome {
    const body = renderExecution(row);
    if (row.state === "settling" || row.state === "settled") return { status: 200, body, replayed: false };
    if (row.state === "opening" || row.state === "running") {
      const error = new ApiError(
        "chain_unavailable",
        "The chain did not answer in time; the execution finishes by itself (refunded if it cannot settle). Follow it at its URL.",
        undefined,
        { execution_id: row.id, execution: body },
      );
      return { status: error.status, body: error, replayed: false };
    }
    const code = (row.failure_code ?? "internal_error") as ErrorCode;
    const error = new ApiError(code, row.failure_message ?? undefined, undefined, {
      execution_id: row.id,
      refund_transaction: row.refund_tx?.signature ?? null,
      execution: body,
    });
    return { status: error.status, body: error, replayed: false };
  }

  private async row(id: string): Promise<ExecutionRow> {
    const { rows } = await this.db.query<ExecutionRow>(`SELECT ${COLUMNS} FROM executions WHERE id = $1`, [id]);
    if (!rows[0]) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return rows[0];
  }

  /**
   * Moves `row` to `state` with `changes` (column values), unless another instance moved it
   * first: then the row as that instance left it.
   */
  private async advance(row: ExecutionRow, state: ExecutionState, changes: Record<string, unknown>): Promise<ExecutionRow> {
    const columns = Object.keys(changes);
    const { rowCount } = await runStatement(this.db, this.advanceStatement(columns), [
      row.id,
      state,
      row.state,
      ...columns.map((column) => changes[column]),
    ]);
    if (rowCount === 1) return { ...row, ...changes, state } as ExecutionRow;
    return this.row(row.id);
  }

  // One statement per set of columns, as each step always writes the same ones. Numbered, not
  // named after the columns: PostgreSQL cuts statement names at 63 characters.
  private advanceStatement(columns: string[]): Statement {
    const key = columns.join(",");
    let statement = this.advanceStatements.get(key);
    if (!statement) {
      const sets = columns.map((column, i) => `${column} = $${i + 4}`);
      statement = {
        name: `executions_advance_${this.advanceStatements.size + 1}`,
        text: `UPDATE executions SET state = $2, ${[...sets, "updated_at = clock_timestamp()"].join(", ")}
       WHERE id = $1 AND state = $3`,
      };
      this.advanceStatements.set(key, statement);
    }
    return statement;
  }

  private escrowRef(row: ExecutionRow, sender: TransactionSender) {
    return {
      executionId: executionIdBytes(row.id),
      agent: new PublicKey(row.agent),
      payer: new PublicKey(row.wallet),
      payerTokenAccount: new PublicKey(row.payer_token_account),
      rentPayer: sender.signer.publicKey,
    };
  }
}

function resignSettle(
  row: ExecutionRow,
  usdcMint: PublicKey,
  sender: TransactionSender,
  escrow: ReturnType<ExecutionService["escrowRef"]>,
) {
  return settleInstructions({
    relayer: sender.signer.publicKey,
    usdcMint,
    escrow,
    payoutAccount: new PublicKey(row.payout_account!),
    resultHash: row.result_hash!,
    feeShardIndex: row.fee_shard!,
    requestHash: row.request_hash,
    signingKey: bs58.decode(row.signing_key!),
    signature: row.creator_signature!,
  });
}

/**
 * A fee shard for the next fee: any will do, as long as concurrent settlements spread over them
 * (one token account each, so their transactions do not lock the same account).
 */
function anyFeeShard(): number {
  return Math.floor(Math.random() * FEE_SHARD_COUNT);
}

/**
 * A transaction refused because the relayer, its fee payer and the payer of the rent of the
 * accounts it opens, has too little SOL: for the fee (or no account at all), for its own rent
 * exemption, or for the rent of a new account (the system program's "insufficient lamports").
 */
function feePayerShort(sent: { err: unknown; logs: string[] }): boolean {
  const err = JSON.stringify(sent.err ?? null);
  return (
    /InsufficientFundsForFee|InsufficientFundsForRent|"AccountNotFound"/.test(err) ||
    sent.logs.some((line) => /insufficient lamports/i.test(line))
  );
}

/** The program error named in a failed simulation's message ("custom program error: 0x1771"). */
function errorFromLogs(message: string): string | null {
  const match = /custom program error: (0x[0-9a-f]+)/i.exec(message);
  return match ? (errorFromCode(Number(match[1]))?.name ?? null) : null;
}

export function executionIdBytes(id: string): Uint8Array {
  return bs58.decode(id.slice("exec_".length));
}

/** The 16 bytes an API key id (`key_` + base58) records in the escrow. */
export function keyIdBytes(id: string): Uint8Array {
  return bs58.decode(id.slice("key_".length));
}
