// Confirming settlements and refunds. An execution answers its caller once its settle (or refund)
// is processed; it becomes final (settled, refunded) once the transaction is confirmed. The
// tracker below watches this instance's fresh transactions together, one getSignatureStatuses
// call and one UPDATE for all of them each round. A transaction still unseen a while after its
// last send is sent again (the same bytes: a cluster loses some transactions it accepts); one
// with an error on chain, or not confirmed long after, goes to the `finish` job, which
// rebroadcasts and re-signs once its blockhash has expired. If this instance dies first, the
// sweep gives its executions to the job.
import type { NetworkName } from "@agent-market/program";
import { reportBackgroundError } from "@agent-market/service";

import type { SignedTransaction, TransactionSender } from "../chain/tx-sender.js";
import type { Completion, ExecutionStore } from "./execution-store.js";

export interface Watched {
  id: string;
  network: NetworkName;
  state: "settling" | "refunding";
  /** The settle or refund transaction, as recorded. */
  tx: SignedTransaction;
  finished_at: Date;
}

export interface TrackerOptions {
  /** Time between rounds: about a slot, the time a processed transaction takes to be confirmed. */
  poll_ms: number;
  /** A transaction without a status this long after it was last sent is sent again. */
  rebroadcast_ms: number;
  /** A transaction not confirmed by then goes to the finish job. */
  handover_after_ms: number;
}

export class ConfirmationTracker {
  private readonly pending = new Map<string, Watched & { since_ms: number; sent_ms: number }>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly store: ExecutionStore,
    private readonly senders: Partial<Record<NetworkName, TransactionSender>>,
    /** Gives an execution to the finish job. */
    private readonly handover: (id: string) => Promise<void>,
    private readonly options: TrackerOptions,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  watch(watched: Watched): void {
    if (this.closed) {
      void this.handover(watched.id).catch(() => undefined);
      return;
    }
    const now = Date.now();
    this.pending.set(watched.id, { ...watched, since_ms: now, sent_ms: now });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.round || this.closed || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.round = this.check()
        .catch((error: unknown) => reportBackgroundError("confirmation round", error))
        .finally(() => {
          this.round = undefined;
          this.schedule();
        });
    }, this.options.poll_ms);
  }

  private async check(): Promise<void> {
    const watched = [...this.pending.values()];
    // Each sender folds concurrent status requests into getSignatureStatuses calls of 256.
    const statuses = await Promise.all(
      watched.map((w) => this.senders[w.network]!.status(w.tx.signature).catch(() => undefined)),
    );
    const confirmed: Completion[] = [];
    const handovers: string[] = [];
    const resends: (Watched & { sent_ms: number })[] = [];
    const now = Date.now();
    watched.forEach((w, i) => {
      const status = statuses[i];
      if (status && status.err === null && status.confirmationStatus !== "processed" && status.confirmationStatus !== null) {
        confirmed.push({
          id: w.id,
          from: w.state,
          final: w.state === "settling" ? "settled" : "refunded",
          finished_at: w.finished_at,
        });
      } else if ((status && status.err !== null) || now - w.since_ms > this.options.handover_after_ms) {
        handovers.push(w.id);
      } else if (status === null && now - w.sent_ms > this.options.rebroadcast_ms) {
        w.sent_ms = now;
        resends.push(w);
      }
    });
    // Whatever a resend answers, the next rounds read the status; the finish job judges the rest.
    await Promise.all(resends.map((w) => this.senders[w.network]!.send(w.tx)));
    try {
      await this.store.completeAll(confirmed);
      for (const c of confirmed) this.pending.delete(c.id);
    } catch {
      // Left pending: the next round tries again, and the finish job takes over in the end.
    }
    for (const id of handovers) {
      await this.handover(id).then(
        () => this.pending.delete(id),
        () => undefined,
      );
    }
  }

  /** Stops watching; what is still pending goes to the finish job. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.round;
    const left = [...this.pending.keys()];
    this.pending.clear();
    await Promise.all(left.map((id) => this.handover(id).catch(() => undefined)));
  }
}
