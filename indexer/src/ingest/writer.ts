// The network's single writer: holds a session-level advisory lock on a dedicated connection
// while it ingests, so a second indexer of the same network only serves GraphQL until the
// first one goes away. Runs the backfill once, the live source, the gap check and finality on
// their intervals; every loop logs its errors and carries on.
import type { Logger, Pool, PoolClient } from "@agent-market/service";

import type { IndexerConfig } from "../config.js";
import { backfill } from "./backfill.js";
import { settleFinality } from "./finality.js";
import { startLive, type LiveSource } from "./live.js";
import type { SolanaRpc } from "./rpc.js";
import type { EventStore } from "./store.js";

const LOCK_RETRY_MS = 2_000;

export interface WriterOptions {
  onIngested?(signature: string): void;
}

export class Writer {
  private lockClient: PoolClient | null = null;
  private live: LiveSource | null = null;
  private timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private running = new Set<Promise<unknown>>();

  constructor(
    private readonly config: IndexerConfig,
    private readonly pool: Pool,
    private readonly rpc: SolanaRpc,
    private readonly store: EventStore,
    private readonly logger: Logger,
    private readonly options: WriterOptions = {},
  ) {}

  get isWriter(): boolean {
    return this.lockClient !== null;
  }

  /** Takes the lock (now or when it frees up) and starts the sources. */
  start(): void {
    this.track(this.acquire());
  }

  private track(work: Promise<unknown>): void {
    const guarded = work.catch((err) => this.logger.error({ err }, "indexer task failed"));
    this.running.add(guarded);
    void guarded.finally(() => this.running.delete(guarded));
  }

  private async acquire(): Promise<void> {
    while (!this.stopped) {
      const client = await this.pool.connect();
      const locked = await client
        .query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS locked", [`indexer:${this.config.schema}`])
        .then((result) => result.rows[0]!.locked)
        .catch(() => false);
      if (locked && !this.stopped) {
        this.lockClient = client;
        // Losing the session loses the lock: stop writing, and try to take it again.
        client.on("error", () => this.lose());
        this.logger.info({ network: this.config.network }, "indexer is the writer");
        this.begin();
        return;
      }
      if (locked) await client.query("SELECT pg_advisory_unlock(hashtext($1))", [`indexer:${this.config.schema}`]).catch(() => {});
      client.release();
      if (!this.stopped) this.logger.info({ network: this.config.network }, "another indexer writes this network; serving only");
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }

  private lose(): void {
    if (!this.lockClient) return;
    this.lockClient.release(true);
    this.lockClient = null;
    this.halt();
    if (!this.stopped) this.start();
  }

  private begin(): void {
    this.track(this.runBackfill());
    if (this.config.live) {
      this.live = startLive(this.config.websocket_url, this.rpc, this.store, {
        onError: (err) => this.logger.warn({ err }, "live ingestion failed; the gap check will repair it"),
        onIngested: this.options.onIngested,
      });
    }
    this.every(this.config.gap_check_interval_ms, () => this.runBackfill());
    this.every(this.config.finality_interval_ms, async () => {
      const result = await settleFinality(this.rpc, this.store);
      if (result.dropped > 0) this.logger.warn({ dropped: result.dropped }, "dropped transactions removed");
    });
  }

  private async runBackfill(): Promise<void> {
    const result = await backfill(this.rpc, this.store, { batchSize: this.config.backfill_batch_size });
    if (result.events > 0) this.logger.info({ ...result }, "backfill stored events");
  }

  /** Runs `task` every `intervalMs`, never two at once; a failure is logged and the next run comes. */
  private every(intervalMs: number, task: () => Promise<void>): void {
    const loop = () => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.stopped || !this.lockClient) return;
        this.track(task().finally(() => !this.stopped && this.lockClient && loop()));
      }, intervalMs);
      this.timers.add(timer);
    };
    loop();
  }

  private halt(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const live = this.live;
    this.live = null;
    if (live) this.track(live.close());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halt();
    await Promise.allSettled([...this.running]);
    if (this.lockClient) {
      await this.lockClient.query("SELECT pg_advisory_unlock(hashtext($1))", [`indexer:${this.config.schema}`]).catch(() => {});
      this.lockClient.release();
      this.lockClient = null;
    }
  }
}
