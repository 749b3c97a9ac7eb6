// A server's view of the writer's commits: one connection that LISTENs on the network's channel
// (ingest/change-notice.ts), keeps the finalized watermark in memory (every request needs it for
// the `finalized` flags), and hands each change to the GraphQL subscriptions that asked for it.
// Notices sent while the connection is down are lost: on reconnecting, the watermark is read
// again and every agent subscriber is woken to re-read its figures.
import type { Logger } from "@agent-market/service";
import pg from "pg";

import { channelOf, type ChangeNotice, type ExecutionChange } from "./ingest/change-notice.js";

const RECONNECT_MS = 1_000;
/**
 * Notices of this process's commits awaited back from PostgreSQL, at most. One that came back
 * before its commit was told here stays awaited: its id is unique, so it only takes room.
 */
const MAX_AWAITED_ECHOES = 10_000;
/** How the listening connection shows in pg_stat_activity. */
export const CHANGE_FEED_APPLICATION = "agent-market-indexer-changes";

export class ChangeFeed {
  private client: pg.Client | null = null;
  private watermark: number | null = null;
  private changes = 0;
  private stopped = false;
  private reconnect: NodeJS.Timeout | null = null;
  private readonly executionListeners = new Set<(change: ExecutionChange) => void>();
  private readonly noticeListeners = new Set<(notice: ChangeNotice | null) => void>();
  /** The ids of this process's own notices, already told at their commit: each comes back once. */
  private readonly awaitedEchoes = new Set<string>();
  private readonly agentListeners = new Map<string, Set<() => void>>();

  constructor(
    private readonly databaseUrl: string,
    private readonly schema: string,
    private readonly logger: Logger,
  ) {}

  /** Listens (and keeps listening, reconnecting after a loss) until `close`. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: CHANGE_FEED_APPLICATION });
    client.on("notification", (message) => this.receive(message.payload));
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    try {
      await client.connect();
      // LISTEN first: a move of the watermark after the read below is then received.
      await client.query(`LISTEN "${channelOf(this.schema)}"`);
      const row = (await client.query(`SELECT finalized_slot FROM ${this.schema}.checkpoint`)).rows[0];
      if (this.stopped) {
        await client.end().catch(() => {});
        return;
      }
      this.client = client;
      this.watermark = Number(row?.finalized_slot ?? 0);
      this.changes += 1;
      this.awaitedEchoes.clear();
      // What was missed while not listening is unknown.
      for (const listener of this.noticeListeners) listener(null);
      for (const listeners of this.agentListeners.values()) for (const listener of listeners) listener();
    } catch (err) {
      this.lost(client, err);
    }
  }

  /**
   * A number that moves with every change received (and every reconnection): reads made for one
   * value may be shared by every subscriber answering the same change.
   */
  generation(): number {
    return this.changes;
  }

  /**
   * A commit made by this process, with the notices it sent: what was read before it may no
   * longer hold, and this process knows at once, before the notices come back from PostgreSQL.
   * The watermark waits for its notice (commits are told here in order, but a notice could
   * still arrive after a later commit's).
   */
  noteCommit(notices: readonly ChangeNotice[]): void {
    this.changes += 1;
    for (const notice of notices) {
      if (notice.id === undefined) continue;
      if (this.awaitedEchoes.size >= MAX_AWAITED_ECHOES) this.awaitedEchoes.clear();
      this.awaitedEchoes.add(notice.id);
    }
    // A commit without notices moved the checkpoint only: answers that read everything are told.
    for (const notice of notices.length > 0 ? notices : [{}]) for (const listener of this.noticeListeners) listener(notice);
  }

  /** `listener` runs at each notice (null: anything may have changed, after a reconnection). */
  onNotice(listener: (notice: ChangeNotice | null) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  /** The finalized watermark, or null while not listening (the caller reads the table). */
  finalizedSlot(): number | null {
    return this.watermark;
  }

  onExecution(listener: (change: ExecutionChange) => void): () => void {
    this.executionListeners.add(listener);
    return () => this.executionListeners.delete(listener);
  }

  /** `listener` runs after each commit that changed the agent's record or any of its executions. */
  onAgent(address: string, listener: () => void): () => void {
    const listeners = this.agentListeners.get(address) ?? new Set<() => void>();
    listeners.add(listener);
    this.agentListeners.set(address, listeners);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.agentListeners.delete(address);
    };
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.reconnect) clearTimeout(this.reconnect);
    const client = this.client;
    this.client = null;
    this.watermark = null;
    await client?.end().catch(() => {});
  }

  private receive(payload: string | undefined): void {
    let notice: ChangeNotice;
    try {
      notice = JSON.parse(payload ?? "") as ChangeNotice;
    } catch {
      return;
    }
    if (notice.finalizedSlot !== undefined) this.watermark = notice.finalizedSlot;
    this.changes += 1;
    // A notice of this process's own commit was told at the commit; telling it again would only
    // make the answers computed since then computed once more.
    const echo = notice.id !== undefined && this.awaitedEchoes.delete(notice.id);
    if (!echo) for (const listener of this.noticeListeners) listener(notice);
    for (const item of notice.executions ?? []) {
      const [id, payer, agent, removed] = item;
      const change: ExecutionChange = { id, payer, agent, removed, apiKeyId: item[4] ?? null, creator: item[5] ?? null };
      for (const listener of this.executionListeners) listener(change);
    }
    for (const agent of notice.agents ?? []) for (const listener of this.agentListeners.get(agent) ?? []) listener();
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== null && this.client !== client) return;
    this.client = null;
    this.watermark = null;
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
    if (this.stopped || this.reconnect) return;
    this.logger.warn({ err }, "change feed lost its connection; reconnecting");
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      void this.start();
    }, RECONNECT_MS);
  }
}
