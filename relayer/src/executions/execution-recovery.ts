// Recovery: every execution ends settled or refunded exactly once, whatever stopped its run.
// The finish job moves an execution on from wherever its row stands (rebroadcasting the recorded
// transaction, re-signing only once it can no longer land); the sweep hands it the executions of
// dead instances; the heartbeat tells the others this instance is alive.
import { escrowPda, MAX_EXECUTION_SECS, type RefundReason } from "@agent-market/program";
import { reportBackgroundError } from "@agent-market/service";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { JOB_DONE, retryJob, type JobOutcome, type JobQueue } from "../jobs/job-queue.js";
import { executionIdBytes, type ExecutionRow } from "./execution-row.js";
import { settledInLog } from "./log-settlement.js";
import { CONFIRMATION_HANDOVER_MS, SETTLE_MARGIN_MS, type ExecutionRunner } from "./execution-run.js";
import type { ExecutionStore } from "./execution-store.js";
import type { SubscriptionService } from "./subscription-service.js";
import { resignSettle, senderOf, signRefund, type Senders } from "./transactions.js";

/** A run lasts at most the creator's longest time plus the escrow's opening; past this it is stalled. */
export const STALLED_AFTER_SECS = MAX_EXECUTION_SECS + 120;

export interface RecoveryOptions {
  instance_id: string;
  /** An instance whose heartbeat is older than this is taken for dead. */
  instance_timeout_secs: number;
}

export class ExecutionRecovery {
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: ExecutionStore,
    private readonly runner: ExecutionRunner,
    private readonly subscriptions: SubscriptionService,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    private readonly jobs: JobQueue,
    private readonly options: RecoveryOptions,
  ) {}

  /** An async execution's job: runs it if no one has yet, else moves it on. */
  async execute(id: string): Promise<JobOutcome> {
    return (await this.runner.runAsync(id)) ? JOB_DONE : this.finish(id);
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
    this.heartbeat = setInterval(() => void beat().catch((error: unknown) => reportBackgroundError("heartbeat", error)), 1_000);
    this.heartbeat.unref();
  }

  stopInstance(): void {
    clearInterval(this.heartbeat);
  }

  /**
   * At shutdown: this instance's unfinished executions go to the finish job, and its heartbeat
   * row goes, so every other instance's sweep takes them over at once.
   */
  async handOverOwned(): Promise<number> {
    clearInterval(this.heartbeat);
    const { rows } = await this.db.query<{ id: string }>(
      "SELECT id FROM executions WHERE owner = $1 AND state IN ('opening', 'running', 'settling', 'refunding')",
      [this.options.instance_id],
    );
    for (const { id } of rows) await this.jobs.add("finish", id);
    await this.db.query("DELETE FROM relayer_instances WHERE id = $1", [this.options.instance_id]);
    return rows.length;
  }

  /**
   * Moves an execution on from wherever it stands; safe to run again and from any instance.
   * `retry` while it still waits on the chain, so the job runs again.
   */
  async finish(id: string): Promise<JobOutcome> {
    const row = await this.store.row(id);
    const sender = senderOf(this.senders, row.network);
    switch (row.state) {
      case "settled":
      case "refunded":
      case "failed":
        return JOB_DONE;
      case "opening": {
        if (!row.escrow_tx) {
          if (row.mode === "async") return this.execute(id);
          await this.store.fail(row, "internal_error", "the execution stopped before its escrow was signed");
          return JOB_DONE;
        }
        const state = await sender.state(row.escrow_tx);
        if (state.kind === "landed" && state.err === null) {
          const escrow = await this.runner.awaitEscrow(row);
          if (escrow) await this.refundAbandoned(row, escrow);
          return retryJob("escrow refund under way");
        }
        if (state.kind === "landed" || state.kind === "expired") {
          await this.store.fail(row, "escrow_rejected", state.kind === "expired" ? "open_escrow never landed" : "open_escrow failed on chain");
          return JOB_DONE;
        }
        await sender.send(row.escrow_tx);
        return retryJob("open_escrow not landed yet");
      }
      case "running":
        await this.refundAbandoned(row);
        return retryJob("refund under way");
      case "settling":
      case "refunding": {
        const tx = row.state === "settling" ? row.settle_tx! : row.refund_tx!;
        const state = await sender.state(tx);
        if (state.kind === "landed" && state.err === null) {
          if (state.confirmation === "processed") return retryJob("waiting for confirmation");
          await this.store.complete(row, row.state === "settling" ? "settled" : "refunded");
          return JOB_DONE;
        }
        if (state.kind === "pending") {
          await sender.send(tx);
          return retryJob("not landed yet");
        }
        // Expired unlanded, or landed with an error: sign anew. A settlement whose escrow deadline
        // is near or past becomes a refund; an escrow already closed is done: settled if the
        // transaction that closed it appended it to the receipt log, else refunded (or reclaimed
        // by its payer).
        const executionId = executionIdBytes(row.id);
        const programId = this.chain.programId(row.network);
        const connection = this.chain.connection(row.network);
        const [escrow] = await connection.getMultipleAccountsInfo([escrowPda(executionId, programId)], "confirmed");
        // Only a row that recorded a settlement can have one landed (a refund may have followed it).
        const settled =
          !escrow && row.settle_tx !== null && (await settledInLog(connection, programId, { executionId, nonce: BigInt(row.escrow_nonce!) }));
        if (settled) {
          await this.store.complete(row, "settled");
          return JOB_DONE;
        }
        if (!escrow) {
          await this.store.complete(row, "refunded");
          return JOB_DONE;
        }
        if (row.state === "settling" && row.escrow_deadline!.getTime() - SETTLE_MARGIN_MS > Date.now() && state.kind === "expired") {
          const resigned = await sender.sign(resignSettle(row, (await this.chain.market(row.network)).usdcMint, sender, this.chain.programId(row.network)));
          const next = await this.store.advance(row, "settle_resigned", { settle_tx: resigned });
          await sender.send(next.settle_tx!);
        } else if (row.state === "settling") {
          const next = await this.runner.startRefund(
            row,
            "Timeout",
            "creator_timeout",
            "settle could not land before the escrow deadline",
          );
          await sender.send(next.refund_tx!);
        } else {
          const refund_tx = await signRefund(this.chain, this.senders, row, row.refund_reason as RefundReason);
          const next = await this.store.advance(row, "refund_resigned", { refund_tx });
          await sender.send(next.refund_tx!);
        }
        return retryJob("re-signed");
      }
    }
  }

  /**
   * An execution with an open escrow whose caller is gone (its relayer died): the result is
   * lost, refund. `escrow`: the escrow's facts when the row does not hold them yet.
   */
  private async refundAbandoned(row: ExecutionRow, escrow: Partial<ExecutionRow> = {}): Promise<void> {
    const next = await this.runner.startRefund(
      row,
      "RelayerError",
      "relayer_error",
      "the relayer stopped before the creator's result was recorded",
      escrow,
    );
    await senderOf(this.senders, row.network).send(next.refund_tx!);
  }

  /**
   * Finishes the executions of dead instances; those of live ones that made no progress for
   * longer than any run lasts (a creator's longest time, and the escrow's opening); and
   * settlements and refunds left waiting on the chain longer than a live instance's tracker waits.
   */
  async sweep(): Promise<void> {
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT e.id FROM executions e LEFT JOIN relayer_instances i ON i.id = e.owner
       WHERE e.state IN ('opening', 'running', 'settling', 'refunding')
         AND ((e.owner IS NOT NULL OR e.mode = 'sync' OR e.state IN ('settling', 'refunding'))
              AND (i.id IS NULL OR i.heartbeat_at < clock_timestamp() - make_interval(secs => $1))
              OR e.state IN ('settling', 'refunding') AND e.updated_at < clock_timestamp() - make_interval(secs => $2)
              OR e.state IN ('opening', 'running') AND e.updated_at < clock_timestamp() - make_interval(secs => $3))
         AND e.updated_at < clock_timestamp() - interval '1 second'
       LIMIT 500`,
      [this.options.instance_timeout_secs, CONFIRMATION_HANDOVER_MS / 1000 + 10, STALLED_AFTER_SECS],
    );
    for (const { id } of rows) await this.jobs.add("finish", id);
    await this.subscriptions.sweep();
    await this.db.query("DELETE FROM idempotency_keys WHERE created_at < clock_timestamp() - interval '48 hours'");
  }
}
