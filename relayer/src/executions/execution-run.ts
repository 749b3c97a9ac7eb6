// One execution driven from its escrow to its answer: open_escrow, the creator's POST /execute,
// the result verified, then settle_batch (or refund). Each step is a committed state of the row before
// the chain or the creator is touched, so the finish job (execution-recovery.ts) can take over
// from any of them. The program, not this code, fixes amounts.
import {
  chargeOf,
  decodeAgent,
  decodeEscrow,
  escrowPda,
  EXECUTE_PROTOCOL_VERSION,
  formatUsdc,
  toHex,
  type Agent,
  type CreatorExecuteRequest,
  type RefundReason,
} from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";
import { reportBackgroundError } from "@agent-market/service";

import type { ChainService } from "../chain/chain-service.js";
import type { AccountData } from "../chain/rpc-client.js";
import type { SendOutcome } from "../chain/tx-sender.js";
import type { CreatorClient } from "../creator/creator-client.js";
import type { ErrorCode } from "../errors.js";
import type { JobQueue } from "../jobs/job-queue.js";
import type { CircuitBreaker } from "../listings/circuit-breaker.js";
import { FAILURES, recordVerdict } from "./creator-verdict.js";
import type { ListingForExecution, ListingService } from "../listings/listing-service.js";
import { unprobedEndpoint } from "../listings/probed-endpoint.js";
import { AgentActivity } from "./agent-activity.js";
import { ConfirmationTracker } from "./confirmations.js";
import type { OutputChunk } from "../creator/streamed-answer.js";
import type { ExecutionLeases } from "./execution-leases.js";
import type { ExecutionStream } from "./execution-stream.js";
import { executionIdBytes, type EscrowFacts, type ExecutionRow } from "./execution-row.js";
import type { ExecutionStore } from "./execution-store.js";
import type { OpenBatches } from "./open-batches.js";
import type { RefundBatches } from "./refund-batches.js";
import type { SettleBatches } from "./settle-batches.js";
import {
  errorFromLogs,
  escrowBinding,
  feePayerShort,
  openEscrowInstructions,
  REBROADCAST_MS,
  senderOf,
  signRefund,
  type Senders,
} from "./transactions.js";

const bs58 = utils.bytes.bs58;

/** Time kept before the escrow deadline for settle_batch to land. */
export const SETTLE_MARGIN_MS = 5_000;
/** When the finish job first looks at an execution whose transaction's fate is unknown. */
export const FINISH_RETRY_MS = 400;
/** How long a sent open_escrow is awaited before the finish job takes the execution over. */
const ESCROW_WAIT_MS = 5_000;
/**
 * A tenth of the wait, and a quarter of a cluster's slot: the escrow shows at a slot boundary,
 * and a poll that just missed it costs up to this much again.
 */
const ESCROW_POLL_MS = 100;
/** About a slot: a processed transaction is confirmed a slot later. */
const CONFIRMATION_POLL_MS = 100;
/** A settlement or refund not confirmed by then is the finish job's (rebroadcast, re-sign). */
export const CONFIRMATION_HANDOVER_MS = 20_000;
/** Least time a creator is given; an escrow whose deadline leaves less is refunded at once. */
const MIN_CREATOR_TIME_MS = 1_000;
const HANDOVER_ATTEMPTS = 60;
const HANDOVER_RETRY_MS = 1_000;

export interface RunOptions {
  instance_id: string;
  creator_max_response_bytes: number;
  /** Counts the refunds creators cause, and closes a circuit whose probe succeeded. */
  breaker: CircuitBreaker;
  /** The in-flight leases an async execution's job takes over from its request. */
  leases: ExecutionLeases;
  /** Settlement into the agents' receipt logs: a lone result is a batch of one. */
  settle_batches: SettleBatches;
  /** Opens escrows of one agent together; without it, each execution's open is signed with its row. */
  open_batches?: OpenBatches;
  /** Sends the refunds of one agent together; without it, each refund is a transaction of its own. */
  refund_batches?: RefundBatches;
  /** Counts the runs in progress per agent, for the batchers' gathering. */
  activity?: AgentActivity;
}

/** Where a call to the creator left its execution; `sent`: its settle_batch or batched refund was sent already. */
interface Called {
  row: ExecutionRow;
  sent?: SendOutcome;
}

/** What an execution already read, handed on so it is not read twice; and where a streamed one reports. */
export interface ExecutionContext {
  agent: Agent;
  listing: ListingForExecution;
  stream?: ExecutionStream;
}


export class ExecutionRunner {
  private readonly confirmations: ConfirmationTracker;

  constructor(
    private readonly store: ExecutionStore,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    private readonly listings: ListingService,
    private readonly creators: CreatorClient,
    private readonly jobs: JobQueue,
    private readonly options: RunOptions,
  ) {
    this.confirmations = new ConfirmationTracker(store, senders, (id) => jobs.add("finish", id), {
      poll_ms: CONFIRMATION_POLL_MS,
      rebroadcast_ms: REBROADCAST_MS,
      handover_after_ms: CONFIRMATION_HANDOVER_MS,
    });
  }

  /**
   * Whether a new sync execution of `agent` carries its own signed open_escrow, sent as it is if
   * its open goes alone: yes, unless opens are batched and the agent is busy, when its open goes
   * in a batch whose transaction is recorded on its row before the send, and one signed ahead
   * would be thrown away (a compile, a signature and a kilobyte written per execution).
   */
  signsOwnOpen(network: string, agent: string): boolean {
    return !this.options.open_batches || !this.options.activity?.busy(AgentActivity.key(network, agent));
  }

  /** Hands the settlements still waiting for their confirmation to the finish job. */
  close(): Promise<void> {
    return this.confirmations.close();
  }

  /**
   * Runs an execution this instance owns to its answer. Whatever fails once its row is written
   * (the database, the RPC, signing) may leave an escrow open: the execution goes to the finish
   * job at once, and the caller gets the row as it last stood, never "nothing was charged".
   */
  async run(row: ExecutionRow, context?: ExecutionContext): Promise<ExecutionRow> {
    let current = row;
    const activity = AgentActivity.key(row.network, row.agent);
    this.options.activity?.enter(activity);
    try {
      const opened = await this.openEscrow(current);
      let called: Called = { row: opened.row };
      if (opened.escrow) {
        if (opened.row.mode === "async") {
          // Its caller polls for it: `running` is worth a write.
          called.row = await this.store.advance(opened.row, "escrow_opened", opened.escrow);
          if (called.row.state === "running") called = await this.callCreator(called.row, {}, context);
        } else {
          // Its caller waits on this very request: the escrow's facts are written with the result,
          // a commit fewer. A crash meanwhile leaves `opening`, which the finish job refunds alike.
          context?.stream?.opened({ ...opened.row, ...opened.escrow, state: "running" });
          called = await this.callCreator({ ...opened.row, ...opened.escrow }, opened.escrow, context);
        }
      }
      current = called.row;
      if (called.sent) current = await this.afterSend(current, called.sent);
      else if (current.state === "settling" || current.state === "refunding") current = await this.sendFinal(current);
      else this.handOver(current.id, FINISH_RETRY_MS);
      return current;
    } catch (error) {
      reportBackgroundError("execution run", error, { execution_id: row.id, state: current.state });
      this.handOver(row.id);
      return current;
    } finally {
      this.options.activity?.leave(activity);
    }
  }

  /**
   * Gives the execution to the finish job. The job's store may be what failed: tried again every
   * second for a while; past that the sweep finds the execution by its lack of progress.
   */
  handOver(id: string, delay_ms = 0, attempt = 1): void {
    this.jobs.add("finish", id, delay_ms).catch((error: unknown) => {
      reportBackgroundError("finish handover", error, { execution_id: id, attempt });
      if (attempt < HANDOVER_ATTEMPTS) setTimeout(() => this.handOver(id, 0, attempt + 1), HANDOVER_RETRY_MS).unref();
    });
  }

  /** An async execution's job: takes it over, then runs it like a sync one; false if it was taken already. */
  async runAsync(id: string): Promise<boolean> {
    await this.options.leases.adopt(id);
    let taken: boolean | undefined;
    try {
      taken = await this.takeAndRun(id);
      return taken;
    } finally {
      // Not taken: another job runs it, and holds its leases and probe.
      if (taken === false) this.options.leases.handOff(id);
      else {
        await this.options.leases.release(id);
        await this.options.breaker
          .endProbe(id)
          .catch((error: unknown) => reportBackgroundError("circuit probe release", error, { execution_id: id }));
      }
    }
  }

  private async takeAndRun(id: string): Promise<boolean> {
    if (!(await this.store.claimOwner(id, this.options.instance_id))) return false;
    const row = await this.store.row(id);
    const sender = senderOf(this.senders, row.network);
    const escrow_tx = await sender.sign(await openEscrowInstructions(this.chain, sender, [row]));
    await this.run(await this.store.advance(row, "open_recorded", { escrow_tx }));
    return true;
  }

  private async openEscrow(row: ExecutionRow): Promise<{ row: ExecutionRow; escrow: EscrowFacts | null }> {
    let sent: SendOutcome;
    let read: Promise<AccountData | null> | undefined;
    // A run starts before its recorded open_escrow (if any) was ever sent: a batch may replace it.
    if (this.options.open_batches) {
      const opened = await this.options.open_batches.submit(row);
      // Not recorded: another instance moved the row first, and it is theirs.
      if (!opened.sent) return { row: await this.store.row(row.id), escrow: null };
      row = opened.row;
      sent = opened.sent;
      read = Promise.resolve(opened.escrow ?? null);
    } else {
      const sending = senderOf(this.senders, row.network).send(row.escrow_tx!);
      // Asked in the same turn, the read travels in the send's JSON-RPC batch, right behind it: a
      // node that runs a batch in order answers with the escrow the transaction just opened.
      read = this.readEscrow(row);
      sent = await sending;
    }
    if (sent.kind === "processed") return { row, escrow: await this.awaitEscrow(row, await read) };
    if (sent.kind === "rejected") {
      if (feePayerShort(sent)) {
        const message = "open_escrow was refused: the relayer's SOL ran short. Nothing was charged; retry later.";
        return { row: await this.store.fail(row, "relayer_underfunded", message), escrow: null };
      }
      const program = errorFromLogs(sent.message);
      const code: ErrorCode =
        program === "InsufficientBalance"
          ? "insufficient_balance"
          : program === "InsufficientAllowance"
            ? "insufficient_allowance"
            : program === "SubscriptionRequired"
              ? "subscription_required"
              : program === "PriceAboveMaximum"
                ? "price_changed"
                : "escrow_rejected";
      return { row: await this.store.fail(row, code, `open_escrow was refused: ${program ?? sent.message}`), escrow: null };
    }
    // Unknown: the recorded transaction is left to the finish job, which rebroadcasts it until
    // it lands (then refunds) or expires (then nothing was charged).
    return { row, escrow: null };
  }

  /**
   * The open escrow's facts (the amount the program took, the deadline it set), or null if it
   * cannot be seen yet. A cluster runs a transaction a little after accepting it, and loses some
   * it accepted: the escrow is awaited a while, the recorded open_escrow sent again every
   * `REBROADCAST_MS` (the same bytes: it lands at most once), then left to the finish job.
   */
  async awaitEscrow(row: ExecutionRow, known?: AccountData | null): Promise<EscrowFacts | null> {
    let info = known === undefined ? await this.readEscrow(row) : known;
    const sender = senderOf(this.senders, row.network);
    for (let waited_ms = 0; !info && waited_ms < ESCROW_WAIT_MS; waited_ms += ESCROW_POLL_MS) {
      await new Promise((resolve) => setTimeout(resolve, ESCROW_POLL_MS));
      // Answered with the read, like the first send; an outcome other than "processed" is the
      // finish job's to judge once the wait is over.
      const resent = waited_ms % REBROADCAST_MS === REBROADCAST_MS - ESCROW_POLL_MS && row.escrow_tx ? sender.send(row.escrow_tx) : null;
      info = await this.readEscrow(row);
      await resent;
    }
    if (!info) return null;
    const escrow = decodeEscrow(info.data);
    const now = new Date();
    return {
      amount_usdc: escrow.amountUsdc.toString(),
      price_per_unit_usdc: escrow.pricePerUnitUsdc.toString(),
      max_units: escrow.maxUnits.toString(),
      escrow_nonce: escrow.nonce.toString(),
      escrow_deadline: new Date(Number(escrow.deadline) * 1000),
      escrow_opened_at: now,
      creator_started_at: now,
    };
  }

  /** The execution's escrow account at `processed`; null if absent or the RPC did not answer. */
  private readEscrow(row: ExecutionRow): Promise<AccountData | null> {
    return this.chain
      .rpc(row.network)
      .getMultipleAccounts([escrowPda(executionIdBytes(row.id), this.chain.programId(row.network))], "processed")
      .then(([info]) => info ?? null, () => null);
  }

  /** Calls the creator, then records the settle or refund (with `unrecorded`, facts not yet written). */
  private async callCreator(row: ExecutionRow, unrecorded: Partial<ExecutionRow>, context?: ExecutionContext): Promise<Called> {
    const listing = context?.listing ?? (await this.listings.forExecution(row.network, row.agent));
    let agent = context?.agent;
    if (!agent) {
      const [info] = await this.chain.rpc(row.network).getMultipleAccounts([new PublicKey(row.agent)], "processed");
      agent = decodeAgent(info!.data);
    }
    if (!listing) {
      return this.refundCall(row, "CreatorError", "creator_error", "the agent's listing is gone", {
        ...unrecorded,
        creator_finished_at: new Date(),
      });
    }
    // Only the endpoint the listing probed is ever called (listings/probed-endpoint.ts).
    const unprobed = await unprobedEndpoint(this.listings, row.network, row.agent, listing, agent.endpoint);
    if (unprobed !== null) {
      return this.refundCall(row, "CreatorError", "endpoint_changed", unprobed, { ...unrecorded, creator_finished_at: new Date() });
    }
    const deadline_ms = row.escrow_deadline!.getTime();
    const timeout_ms = Math.min(agent.maxExecutionSecs * 1000, deadline_ms - SETTLE_MARGIN_MS - Date.now());
    if (timeout_ms < MIN_CREATOR_TIME_MS) {
      return this.refundCall(row, "RelayerError", "relayer_error", "the escrow's deadline left the creator no time", {
        ...unrecorded,
        creator_finished_at: new Date(),
      });
    }
    // What makes this escrow this escrow, as the program stored it at the open: the creator's
    // signature binds them (docs/execute-protocol.md, "Result digest").
    const request: CreatorExecuteRequest = {
      protocol_version: EXECUTE_PROTOCOL_VERSION,
      execution_id: row.id,
      agent: row.agent,
      network: row.network,
      escrow_nonce: row.escrow_nonce!,
      payer: row.wallet,
      payer_token_account: row.payer_token_account,
      amount_usdc: formatUsdc(BigInt(row.amount_usdc!)),
      task: row.task,
      parameters: row.parameters,
      request_hash: toHex(row.request_hash),
      deadline: new Date(deadline_ms).toISOString(),
      // A metered call's terms, so that its creator stops at the units the escrow can pay for.
      ...(BigInt(row.price_per_unit_usdc ?? "0") > 0n
        ? { max_units: row.max_units!, price_per_unit_usdc: formatUsdc(BigInt(row.price_per_unit_usdc!)) }
        : {}),
    };
    const outcome = await this.creators.call({
      endpoint: agent.endpoint,
      request,
      signing_key: agent.signingKey,
      output_schema: listing.output_schema,
      timeout_ms,
      max_response_bytes: this.options.creator_max_response_bytes,
      ...(context?.stream ? { on_output: (chunk: OutputChunk) => context.stream!.output(chunk) } : {}),
    });
    const finished = { ...unrecorded, creator_finished_at: new Date() };
    // Before the refund is sent: the next call must meet an open circuit (one write, and only an
    // agent with a circuit pays it on success).
    await recordVerdict(this.options.breaker, this.listings, row, outcome.ok, listing);
    if (!outcome.ok) {
      const failure = FAILURES[outcome.failure];
      return this.refundCall(row, failure.reason, failure.code, outcome.message, finished);
    }
    const verified = {
      ...finished,
      output: outcome.output,
      result_hash: Buffer.from(outcome.result_hash),
      result_digest: Buffer.from(outcome.digest),
      units: outcome.units.toString(),
      // What settle_batch will charge: the answer's units were checked against the escrow's maximum.
      charged_usdc: chargeOf(escrowBinding({ ...row, ...unrecorded }), outcome.units).chargedUsdc.toString(),
      creator_signature: Buffer.from(outcome.signature),
      signing_key: bs58.encode(agent.signingKey),
      payout_account: agent.payoutAccount.toBase58(),
    };
    const batched = await this.options.settle_batches.submit({ row, record: verified, agent });
    return batched.sent ? { row: batched.row, sent: batched.sent } : { row: batched.row };
  }

  /** A refund of a call, with the refunds of its agent due at the same time when they go together. */
  private async refundCall(
    row: ExecutionRow,
    reason: RefundReason,
    code: ErrorCode,
    message: string,
    extra: Partial<ExecutionRow>,
  ): Promise<Called> {
    if (!this.options.refund_batches) return { row: await this.startRefund(row, reason, code, message, extra) };
    const refunded = await this.options.refund_batches.submit({
      row,
      record: { ...extra, refund_reason: reason, failure_code: code, failure_message: message },
    });
    return refunded.sent ? { row: refunded.row, sent: refunded.sent } : { row: refunded.row };
  }

  async startRefund(
    row: ExecutionRow,
    reason: RefundReason,
    code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
  ): Promise<ExecutionRow> {
    const refund_tx = await signRefund(this.chain, this.senders, row, reason);
    return this.store.advance(row, "refund_recorded", {
      ...extra,
      refund_tx,
      refund_reason: reason,
      failure_code: code,
      failure_message: message,
    });
  }

  /**
   * Sends the recorded settle or refund; a settle the program refuses turns into a refund. Once
   * processed, the caller has its answer and the tracker waits for the confirmation. A settle
   * refused only because the relayer's SOL ran short is not the creator's fault: it stays, and the
   * finish job sends it again (re-signed as needed) until the escrow's deadline nears.
   */
  async sendFinal(row: ExecutionRow): Promise<ExecutionRow> {
    const sent = await senderOf(this.senders, row.network).send(row.state === "settling" ? row.settle_tx! : row.refund_tx!);
    return this.afterSend(row, sent);
  }

  /** What follows the send of a settle_batch or refund: see sendFinal. */
  private async afterSend(row: ExecutionRow, sent: SendOutcome): Promise<ExecutionRow> {
    const sender = senderOf(this.senders, row.network);
    if (sent.kind === "rejected" && row.state === "settling" && !feePayerShort(sent)) {
      const program = errorFromLogs(sent.message);
      const timedOut = program === "EscrowExpired";
      row = await this.startRefund(
        row,
        timedOut ? "Timeout" : "RelayerError",
        timedOut ? "creator_timeout" : "relayer_error",
        `settle was refused: ${program ?? sent.message}`,
      );
      sent = await sender.send(row.refund_tx!);
    }
    const finished_at = new Date();
    if (sent.kind === "processed" && (row.state === "settling" || row.state === "refunding")) {
      const tx = row.state === "settling" ? row.settle_tx! : row.refund_tx!;
      this.confirmations.watch({ id: row.id, network: row.network, state: row.state, tx, finished_at });
    } else {
      this.handOver(row.id, FINISH_RETRY_MS);
    }
    return { ...row, finished_at };
  }
}
