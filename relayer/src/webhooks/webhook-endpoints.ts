// A wallet's webhook endpoints and their deliveries: what the /v1/webhooks routes read and write.
// Every read and write is scoped to the calling wallet; another wallet's endpoint is as absent as
// one that never was (404 resource_not_found), so ids cannot be probed.
import { randomBytes } from "node:crypto";
import net from "node:net";

import { utils } from "@coral-xyz/anchor";
import { inTransaction } from "@agent-market/service";

import { type Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import { isAllowedAddress, type EndpointPolicy } from "../net/ip-policy.js";
import { MESSAGE_ID_SQL, TEST_EVENT, type WebhookEvent } from "./webhook-events.js";
import { newWebhookSecret } from "./webhook-signing.js";

/** Endpoints one wallet may have: each event is sent once to each, so this bounds the fan-out. */
export const MAX_ENDPOINTS_PER_WALLET = 10;
/** Test sends one endpoint may ask for in TEST_WINDOW_SECS, each one request to its URL. */
export const MAX_TESTS_PER_WINDOW = 20;
export const TEST_WINDOW_SECS = 3_600;
export const MAX_URL_BYTES = 2_048;

/** Everything but the secret, which no answer after the creation's carries. */
const ENDPOINT_COLUMNS = "id, wallet, url, events, description, created_at";

interface EndpointRow {
  id: string;
  wallet: string;
  url: string;
  events: WebhookEvent[];
  description: string;
  created_at: Date;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string | null;
  event: WebhookEvent | typeof TEST_EVENT;
  execution_id: string | null;
  state: "pending" | "succeeded" | "failed";
  attempt_count: number;
  next_attempt_at: Date;
  created_at: Date;
  finished_at: Date | null;
  attempts: { attempt: number; started_at: string; duration_ms: number; status_code: number | null; error: string | null }[];
}

const endpointObject = (row: EndpointRow) => ({
  object: "webhook_endpoint" as const,
  id: row.id,
  url: row.url,
  events: row.events,
  description: row.description,
  created_at: row.created_at.toISOString(),
});

const deliveryObject = (row: DeliveryRow) => ({
  object: "webhook_delivery" as const,
  id: row.id,
  webhook_id: row.endpoint_id,
  event: row.event,
  execution_id: row.execution_id,
  status: row.state,
  attempt_count: row.attempt_count,
  next_attempt_at: row.state === "pending" ? row.next_attempt_at.toISOString() : null,
  created_at: row.created_at.toISOString(),
  finished_at: row.finished_at?.toISOString() ?? null,
  attempts: row.attempts.map((a) => ({ ...a, started_at: new Date(a.started_at).toISOString() })),
});

/** A delivery's attempts, oldest first, as a JSON array (`attempts`). */
const ATTEMPTS_SQL = `coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at,
    'duration_ms', a.duration_ms, 'status_code', a.status_code, 'error', a.error) ORDER BY a.attempt)
    FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts`;

export type WebhookEndpointObject = ReturnType<typeof endpointObject>;

export class WebhookEndpoints {
  constructor(
    private readonly db: Db,
    private readonly policy: EndpointPolicy,
  ) {}

  /** A new endpoint and its secret, which this answer alone ever shows. */
  async create(
    wallet: string,
    input: { url: string; events: WebhookEvent[]; description?: string },
  ): Promise<WebhookEndpointObject & { secret: string }> {
    checkWebhookUrl(input.url, this.policy, "url");
    const id = `whep_${utils.bytes.bs58.encode(randomBytes(16))}`;
    const secret = newWebhookSecret();
    // The wallet's creations take turns (a transaction lock on its wallet), and each counts in a
    // statement of its own, after the lock, so concurrent creations cannot pass the bound together.
    const rows = await inTransaction(this.db, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1))", [wallet]);
      const inserted = await client.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, wallet, url, events, description, secret)
         SELECT $1, $2, $3, $4, $5, $6 WHERE (SELECT count(*) FROM webhook_endpoints WHERE wallet = $2) < $7
         RETURNING ${ENDPOINT_COLUMNS}`,
        [id, wallet, input.url, [...new Set(input.events)], input.description ?? "", secret, MAX_ENDPOINTS_PER_WALLET],
      );
      return inserted.rows;
    });
    if (!rows[0]) {
      throw new ApiError("webhook_limit_reached", undefined, undefined, { limit: MAX_ENDPOINTS_PER_WALLET });
    }
    return { ...endpointObject(rows[0]), secret };
  }

  async list(wallet: string): Promise<WebhookEndpointObject[]> {
    const { rows } = await this.db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE wallet = $1 ORDER BY created_at DESC, id DESC`,
      [wallet],
    );
    return rows.map(endpointObject);
  }

  /** Deletes the endpoint with its deliveries: nothing more is sent to it, even what was queued. */
  async delete(wallet: string, id: string): Promise<WebhookEndpointObject> {
    const { rows } = await this.db.query<EndpointRow>(`DELETE FROM webhook_endpoints WHERE id = $1 AND wallet = $2 RETURNING ${ENDPOINT_COLUMNS}`, [
      id,
      wallet,
    ]);
    if (!rows[0]) throw notFound(id);
    return endpointObject(rows[0]);
  }

  /** Queues a `webhook.test` delivery, sent like any other (signed, retried, recorded). */
  async test(wallet: string, id: string) {
    const { rows } = await this.db.query<{ id: string; recent: string }>(
      `SELECT w.id, (SELECT count(*) FROM webhook_deliveries d
                      WHERE d.endpoint_id = w.id AND d.event = $3
                        AND d.created_at > clock_timestamp() - make_interval(secs => $4)) AS recent
         FROM webhook_endpoints w WHERE w.id = $1 AND w.wallet = $2`,
      [id, wallet, TEST_EVENT, TEST_WINDOW_SECS],
    );
    if (!rows[0]) throw notFound(id);
    if (Number(rows[0].recent) >= MAX_TESTS_PER_WINDOW) {
      const retry_after_secs = 60;
      throw new ApiError(
        "rate_limited",
        `At most ${MAX_TESTS_PER_WINDOW} test sends an hour to one endpoint; retry in ${retry_after_secs} s.`,
        undefined,
        { retry_after_secs },
      );
    }
    const { rows: queued } = await this.db.query<DeliveryRow>(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event) VALUES (${MESSAGE_ID_SQL}, $1, $2)
       RETURNING *, '[]'::json AS attempts`,
      [id, TEST_EVENT],
    );
    return deliveryObject(queued[0]!);
  }

  /** The endpoint's deliveries, newest first, each with its attempts. */
  async deliveries(wallet: string, id: string, page: { limit: number; starting_after?: string }) {
    const owned = await this.db.query("SELECT 1 FROM webhook_endpoints WHERE id = $1 AND wallet = $2", [id, wallet]);
    if (owned.rowCount === 0) throw notFound(id);
    const params: unknown[] = [id, page.limit + 1];
    let after = "";
    if (page.starting_after !== undefined) {
      const cursor = await this.db.query<{ created_at: Date }>(
        "SELECT created_at FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2",
        [page.starting_after, id],
      );
      if (!cursor.rows[0]) throw new ApiError("invalid_cursor", undefined, "starting_after");
      params.push(cursor.rows[0].created_at, page.starting_after);
      after = "AND (d.created_at, d.id) < ($3, $4)";
    }
    const { rows } = await this.db.query<DeliveryRow>(
      `SELECT d.*, ${ATTEMPTS_SQL} FROM webhook_deliveries d WHERE d.endpoint_id = $1 ${after}
        ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
      params,
    );
    return { data: rows.slice(0, page.limit).map(deliveryObject), has_more: rows.length > page.limit };
  }

  /**
   * The callback an async execution of the wallet named, and its delivery once the execution is
   * final (null before). An execution of another wallet, or without a callback, is absent.
   */
  async callback(wallet: string, execution_id: string) {
    const { rows } = await this.db.query<{ url: string; delivery: DeliveryRow | null }>(
      `SELECT c.url, (SELECT row_to_json(x) FROM (SELECT d.*, ${ATTEMPTS_SQL} FROM webhook_deliveries d
                       WHERE d.execution_id = c.execution_id AND d.endpoint_id IS NULL) x) AS delivery
         FROM execution_callbacks c JOIN executions e ON e.id = c.execution_id
        WHERE c.execution_id = $1 AND e.wallet = $2`,
      [execution_id, wallet],
    );
    if (!rows[0]) throw new ApiError("resource_not_found", `No callback of execution ${execution_id}.`, "execution_id");
    const { url, delivery } = rows[0];
    return {
      object: "execution_callback" as const,
      execution_id,
      url,
      // row_to_json leaves timestamps as text.
      delivery:
        delivery === null
          ? null
          : deliveryObject({
              ...delivery,
              next_attempt_at: new Date(delivery.next_attempt_at),
              created_at: new Date(delivery.created_at),
              finished_at: delivery.finished_at === null ? null : new Date(delivery.finished_at),
            }),
    };
  }
}


/**
 * A webhook or callback URL: https (http too under the development policy, as for creators'
 * endpoints), no credentials, no fragment. A host written as an IP address is judged now; a name is
 * judged when each attempt connects, on the addresses it resolves to then.
 */
export function checkWebhookUrl(text: string, policy: EndpointPolicy, param: string): void {
  const allowed = policy === "development" ? ["https:", "http:"] : ["https:"];
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // refused below
  }
  const refuse = (why: string) => new ApiError("webhook_url_not_allowed", `${param} ${why}.`, param);
  if (url === undefined) throw refuse("is not an absolute URL");
  if (Buffer.byteLength(text) > MAX_URL_BYTES) throw refuse(`is longer than ${MAX_URL_BYTES} bytes`);
  if (!allowed.includes(url.protocol)) throw refuse(`must be an ${allowed.join(" or ")} URL`);
  if (url.username !== "" || url.password !== "" || url.hash !== "") throw refuse("must have no credentials or fragment");
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (net.isIP(host) !== 0 && !isAllowedAddress(host, policy)) {
    throw refuse(`names an address the ${policy} endpoint policy refuses`);
  }
}

function notFound(id: string): ApiError {
  return new ApiError("resource_not_found", `No webhook endpoint ${id}.`, "webhook_id");
}
