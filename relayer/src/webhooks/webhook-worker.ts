// Sends the queued webhook deliveries (to endpoints and to async executions' callbacks): every relayer polls the table, takes due deliveries with
// SKIP LOCKED (so two relayers never send one attempt twice), and sends each through the guarded
// client the creators' calls use (endpoint policy at connect time, no redirects, one deadline).
// It runs beside the executions, never in their path: a slow or dead receiver holds one of this
// worker's few slots for one attempt's deadline at most, and an execution only ever inserts rows.
import { performance } from "node:perf_hooks";
import { reportBackgroundError } from "@agent-market/service";

import type { Db } from "../db/database.js";
import type { EndpointPolicy } from "../net/ip-policy.js";
import { guardedRequest, OutboundError } from "../net/guarded-http.js";
import { attemptOffsetSecs, RETRY_SCHEDULE_SECS } from "./retry-schedule.js";
import { renderPayload, type PayloadSource } from "./webhook-payloads.js";
import { signedHeaders } from "./webhook-signing.js";


export interface WebhookWorkerOptions {
  policy: EndpointPolicy;
  /** Attempts in flight at once on this relayer. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint, across every relayer. */
  per_endpoint: number;
  /** One attempt's deadline: DNS, connect, TLS, the request and the response. */
  attempt_timeout_ms: number;
  poll_ms: number;
  /** Delay before attempt i+1 (seconds); the last entry's attempt is the last (retry-schedule.ts). */
  schedule_secs: readonly number[];
  /** In [0, 1): where within its jitter an attempt goes. */
  random: () => number;
}

export const WEBHOOK_WORKER_DEFAULTS: WebhookWorkerOptions = {
  policy: "public",
  concurrency: 16,
  per_endpoint: 4,
  attempt_timeout_ms: 15_000,
  poll_ms: 500,
  schedule_secs: RETRY_SCHEDULE_SECS,
  random: Math.random,
};

/** What a receiver may answer: read and dropped, only its status counts. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Finished deliveries (and their attempts) are kept this long, then deleted. */
export const RETENTION_DAYS = 30;
const PURGE_INTERVAL_MS = 3_600_000;
const PURGE_BATCH = 10_000;

interface Due extends PayloadSource {
  url: string;
  secret: string;
  payload: string | null;
  attempt_count: number;
}

export class WebhookWorker {
  private readonly running = new Set<Promise<void>>();
  private readonly aborter = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private wake: () => void = () => undefined;
  private purged_ms = 0;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: WebhookWorkerOptions,
  ) {}

  start(): void {
    let ticking = false;
    let woken = false;
    const tick = async () => {
      if (this.closed) return;
      ticking = true;
      woken = false;
      const taken = await this.runDue().catch((error: unknown) => {
        reportBackgroundError("webhook poll", error);
        return 0;
      });
      if (Date.now() - this.purged_ms > PURGE_INTERVAL_MS) {
        this.purged_ms = Date.now();
        await this.purge().catch((error: unknown) => reportBackgroundError("webhook purge", error));
      }
      ticking = false;
      // A round that found work looks again at once (it takes one delivery per endpoint), and so
      // does one during which an attempt ended.
      if (!this.closed) this.timer = setTimeout(() => void tick(), taken > 0 || woken ? 0 : this.options.poll_ms);
    };
    // An attempt that ends frees a slot, and may let its endpoint's next delivery go: look now.
    this.wake = () => {
      if (this.closed) return;
      if (ticking) {
        woken = true;
        return;
      }
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void tick(), 0);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  /** Deletes deliveries finished more than RETENTION_DAYS ago (their attempts go with them). */
  async purge(): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries
          WHERE state <> 'pending' AND finished_at < clock_timestamp() - make_interval(days => $1) LIMIT $2)`,
      [RETENTION_DAYS, PURGE_BATCH],
    );
    return rowCount ?? 0;
  }

  /**
   * Takes the due deliveries this relayer has room for and starts an attempt at each: the oldest
   * first, one per endpoint per round and at most `per_endpoint` in flight to one endpoint across
   * every relayer, so that a slow receiver never holds every slot. Returns how many it took.
   */
  async runDue(): Promise<number> {
    const free = this.options.concurrency - this.running.size;
    if (free <= 0) return 0;
    // Locked past the attempt's deadline: a relayer that dies mid-attempt leaves the delivery to
    // another (or to its own next start) once the lock lapses.
    const lock_secs = Math.ceil(this.options.attempt_timeout_ms / 1000) + 30;
    const { rows } = await this.db.query<Due>(
      `WITH candidates AS (
         SELECT id, next_attempt_at FROM (
           SELECT DISTINCT ON (coalesce(d.endpoint_id, d.id)) d.id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.state = 'pending' AND d.next_attempt_at <= clock_timestamp()
              AND (d.locked_until IS NULL OR d.locked_until < clock_timestamp())
              AND (SELECT count(*) FROM webhook_deliveries x
                    WHERE x.endpoint_id = d.endpoint_id AND x.state = 'pending' AND x.locked_until >= clock_timestamp()) < $3
            ORDER BY coalesce(d.endpoint_id, d.id), d.next_attempt_at
         ) c ORDER BY next_attempt_at LIMIT $1
       )
       UPDATE webhook_deliveries d SET locked_until = clock_timestamp() + make_interval(secs => $2), attempt_count = d.attempt_count + 1
         FROM webhook_deliveries t
         LEFT JOIN webhook_endpoints w ON w.id = t.endpoint_id
         LEFT JOIN execution_callbacks c ON t.endpoint_id IS NULL AND c.execution_id = t.execution_id
        WHERE t.id = d.id
          AND d.id IN (SELECT id FROM webhook_deliveries
                        WHERE id IN (SELECT id FROM candidates)
                          AND (locked_until IS NULL OR locked_until < clock_timestamp())
                        FOR UPDATE SKIP LOCKED)
        RETURNING d.id, d.endpoint_id, d.event, d.execution_id, d.created_at, d.payload, d.attempt_count,
                  coalesce(w.url, c.url) AS url, coalesce(w.secret, c.secret) AS secret`,
      [free, lock_secs, this.options.per_endpoint],
    );
    for (const due of rows) {
      const attempt = this.attempt(due)
        .catch((error: unknown) => reportBackgroundError("webhook attempt", error, { delivery: due.id }))
        .finally(() => {
          this.running.delete(attempt);
          this.wake();
        });
      this.running.add(attempt);
    }
    return rows.length;
  }

  private async attempt(due: Due): Promise<void> {
    const started_at = new Date();
    const started = performance.now();
    let status_code: number | null = null;
    let error: string | null = null;
    try {
      const body = await this.payloadOf(due);
      if (body === null) return;
      const response = await guardedRequest({
        method: "POST",
        url: due.url,
        headers: {
          "content-type": "application/json",
          "user-agent": "AgentMarket-Webhooks/1",
          ...signedHeaders(due.secret, due.id, Math.floor(Date.now() / 1000), body),
        },
        body,
        timeout_ms: this.options.attempt_timeout_ms,
        max_response_bytes: MAX_RESPONSE_BYTES,
        policy: this.options.policy,
        signal: this.aborter.signal,
      });
      status_code = response.status;
    } catch (failure) {
      if (failure instanceof OutboundError && failure.code === "aborted") {
        // This relayer is stopping: the attempt does not count, the delivery is taken again.
        await this.db.query(
          "UPDATE webhook_deliveries SET locked_until = NULL, attempt_count = attempt_count - 1 WHERE id = $1",
          [due.id],
        );
        return;
      }
      // A failure of ours (the payload's read, say) counts as an attempt too, so that the
      // schedule ends even for a delivery that can never be sent.
      error = failure instanceof OutboundError ? `${failure.code}: ${failure.message}` : "internal_error";
      if (!(failure instanceof OutboundError)) reportBackgroundError("webhook send", failure, { delivery: due.id });
    }
    const duration_ms = Math.round(performance.now() - started);
    const delivered = status_code !== null && status_code >= 200 && status_code < 300;
    const schedule = this.options.schedule_secs;
    const last = due.attempt_count >= schedule.length;
    // The attempt and the delivery's next step in one statement; a deleted endpoint's delivery is
    // gone, and so is its attempt.
    await this.db.query(
      `WITH attempt AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error)
         SELECT id, $2, $3, $4, $5, $6 FROM webhook_deliveries WHERE id = $1
         ON CONFLICT DO NOTHING
       )
       UPDATE webhook_deliveries SET locked_until = NULL, state = $7,
              next_attempt_at = created_at + make_interval(secs => $8),
              finished_at = CASE WHEN $7 = 'pending' THEN NULL ELSE clock_timestamp() END
        WHERE id = $1`,
      [
        due.id,
        due.attempt_count,
        started_at,
        duration_ms,
        status_code,
        error,
        delivered ? "succeeded" : last ? "failed" : "pending",
        // The schedule counts from the event; a delivery late past its next slot goes at once.
        attemptOffsetSecs(schedule, due.attempt_count, this.options.random()),
      ],
    );
  }

  /** The delivery's body: the one written before its first attempt, or written now. Null: deleted. */
  private async payloadOf(due: Due): Promise<string | null> {
    if (due.payload !== null) return due.payload;
    const body = await renderPayload(this.db, due);
    const { rows } = await this.db.query<{ payload: string }>(
      "UPDATE webhook_deliveries SET payload = coalesce(payload, $2) WHERE id = $1 RETURNING payload",
      [due.id, body],
    );
    return rows[0]?.payload ?? null;
  }

  /** Stops taking deliveries; attempts in flight are cut short and taken again later. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.aborter.abort();
    await Promise.all(this.running);
  }
}
