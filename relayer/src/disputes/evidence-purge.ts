// Evidence files are what a party uploads to argue a dispute, and anyone with a settled execution
// can upload them: they are kept only while they can still matter. A file is purged (its row and
// bytes deleted; the statement and the evidence hash stay) once its execution's dispute was
// resolved, or once the dispute window closed with no dispute recorded, each plus a grace period
// so the parties can still read what they sent. The dispute watcher records a dispute within
// seconds of its opening, far within the grace, so an open dispute's files are never taken.
// Runs on every relayer; the deletes are idempotent. A failure is reported, never thrown.
import type { NetworkName } from "@agent-market/program";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";

/** How long files stay after their dispute was resolved, or after the window closed: 7 days. */
export const EVIDENCE_GRACE_SECS = 7 * 24 * 3600;
export const EVIDENCE_PURGE_INTERVAL_MS = 60 * 60_000;

export interface EvidencePurgeOptions {
  interval_ms: number;
  grace_secs: number;
  onError(error: unknown): void;
}

export class EvidencePurge {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly options: EvidencePurgeOptions,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.once(), this.options.interval_ms);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One purge over every network: the files deleted, or null when it failed (and was reported). */
  async once(): Promise<number | null> {
    try {
      let purged = 0;
      for (const network of this.chain.networks) purged += await this.purge(network);
      return purged;
    } catch (error) {
      this.options.onError(error);
      return null;
    }
  }

  private async purge(network: NetworkName): Promise<number> {
    // The window is the market's, read from the chain (cached): it is not the relayer's to choose.
    const { disputeWindowSecs } = await this.chain.market(network);
    const { rowCount } = await this.db.query(
      `DELETE FROM dispute_attachments a
        USING dispute_evidence e
        JOIN executions x ON x.id = e.execution_id
        LEFT JOIN dispute_outcomes o ON o.execution_id = x.id
        WHERE a.evidence_id = e.id AND x.network = $1
          AND ((o.state IN ('upheld', 'rejected') AND o.resolved_at < now() - make_interval(secs => $3))
            OR (o.execution_id IS NULL AND x.finished_at < now() - make_interval(secs => $2 + $3)))`,
      [network, disputeWindowSecs, this.options.grace_secs],
    );
    return rowCount ?? 0;
  }
}
