// Webhook endpoints from the wallet's side: where the relayer sends the wallet's execution and
// dispute events, a test send, and the record of every delivery. docs/api.md, "Webhooks".
import { paginate } from "./client.js";
import type { Transport } from "./http.js";
import type { Page, PageParams } from "./types.js";

export type WebhookEventType =
  | "execution.succeeded"
  | "execution.refunded"
  | "execution.failed"
  | "dispute.opened"
  | "dispute.resolved";

export interface WebhookEndpoint {
  object: "webhook_endpoint";
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  created_at: string;
}

export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** `whsec_…`: what verifyWebhook checks deliveries with; in this answer only. */
  secret: string;
}

export interface WebhookEndpointCreateParams {
  /** https (http only where the relayer allows local endpoints). */
  url: string;
  events: WebhookEventType[];
  description?: string;
}

export interface WebhookAttempt {
  attempt: number;
  started_at: string;
  duration_ms: number;
  /** The receiver's HTTP status; null when none came, and `error` says why. */
  status_code: number | null;
  error: string | null;
}

export interface WebhookDelivery {
  object: "webhook_delivery";
  /** The message id: the `webhook-id` header of every attempt. */
  id: string;
  /** The endpoint; null for an execution's callback. */
  webhook_id: string | null;
  event: WebhookEventType | "webhook.test";
  execution_id: string | null;
  status: "pending" | "succeeded" | "failed";
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
  attempts: WebhookAttempt[];
}

/** GET /v1/executions/:id/callback: the URL an async execution named, and its delivery once final. */
export interface ExecutionCallback {
  object: "execution_callback";
  execution_id: string;
  url: string;
  /** `webhook_id` null; null itself until the execution is final. */
  delivery: WebhookDelivery | null;
}

const segment = (id: string) => encodeURIComponent(id);

export class SessionWebhooks {
  constructor(private readonly transport: Transport) {}

  /** A new endpoint; its `secret` is in this answer only. At most 10 a wallet. */
  async create(params: WebhookEndpointCreateParams): Promise<CreatedWebhookEndpoint> {
    // Not replayable: a repeat after a lost answer would register a second endpoint.
    const { body } = await this.transport.request<CreatedWebhookEndpoint>({ method: "POST", path: "/v1/webhooks", body: params, replayable: false });
    return body;
  }

  async list(): Promise<Page<WebhookEndpoint>> {
    const { body } = await this.transport.request<Page<WebhookEndpoint>>({ method: "GET", path: "/v1/webhooks", replayable: true });
    return body;
  }

  /** Deletes the endpoint and its deliveries; nothing more is sent to it. */
  async delete(webhookId: string): Promise<WebhookEndpoint> {
    // Not replayable: had the first attempt landed, a repeat would fail with resource_not_found.
    const { body } = await this.transport.request<WebhookEndpoint>({ method: "DELETE", path: `/v1/webhooks/${segment(webhookId)}`, replayable: false });
    return body;
  }

  /** Queues a `webhook.test` delivery to the endpoint (at most 20 an hour). */
  async test(webhookId: string): Promise<WebhookDelivery> {
    const { body } = await this.transport.request<WebhookDelivery>({ method: "POST", path: `/v1/webhooks/${segment(webhookId)}/test`, replayable: false });
    return body;
  }

  /** The endpoint's deliveries, newest first, each with its attempts. */
  async deliveries(webhookId: string, params: PageParams = {}): Promise<Page<WebhookDelivery>> {
    const { body } = await this.transport.request<Page<WebhookDelivery>>({
      method: "GET",
      path: `/v1/webhooks/${segment(webhookId)}/deliveries`,
      query: { ...params },
      replayable: true,
    });
    return body;
  }

  deliveryPages(webhookId: string, params: PageParams = {}): AsyncGenerator<Page<WebhookDelivery>, void, undefined> {
    return paginate((p) => this.deliveries(webhookId, p), params);
  }
}
