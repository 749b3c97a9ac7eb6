// Sign-in nonces and sessions are written by anyone who asks for a nonce or signs in, and are
// useless once expired or signed out: this deletes them, so the tables hold only what can still
// be used (plus a day, so a late client still hears nonce_expired rather than unknown_nonce).
// It runs on every relayer; the deletes are idempotent. A failure is reported and the next run
// tries again: it never throws into a timer.
import type { Db } from "../db/database.js";

/** How long an expired or revoked row is kept. */
export const EXPIRED_RETENTION_SECS = 24 * 3600;
/** How often the relayer purges. */
export const PURGE_INTERVAL_MS = 10 * 60_000;

export interface PurgeOptions {
  interval_ms: number;
  onError(error: unknown): void;
}

export class ExpiredSignInPurge {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: PurgeOptions,
  ) {}

  /** Purges every interval from now on (the first run one interval from now). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.once(), this.options.interval_ms);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One purge: the rows deleted, or null when it failed (and was reported). */
  async once(): Promise<{ nonces: number; sessions: number } | null> {
    try {
      const nonces = await this.db.query(
        "DELETE FROM sign_in_nonces WHERE expires_at < now() - make_interval(secs => $1)",
        [EXPIRED_RETENTION_SECS],
      );
      const sessions = await this.db.query(
        "DELETE FROM sessions WHERE LEAST(expires_at, COALESCE(revoked_at, expires_at)) < now() - make_interval(secs => $1)",
        [EXPIRED_RETENTION_SECS],
      );
      return { nonces: nonces.rowCount ?? 0, sessions: sessions.rowCount ?? 0 };
    } catch (error) {
      this.options.onError(error);
      return null;
    }
  }
}
