// Webhook endpoints from the wallet's side: where the relayer sends the wallet's execution and
// dispute events, a test send, and the record of every delivery. docs/api.md, "Webhooks".
import { paginate } from "./client.js";
import type { Transport } from "./http.js";
import type { Answer, Body } from "./openapi-access.js";
import type { Page, PageParams } from "./types.js";

export type WebhookEndpoint = Answer<"/v1/webhooks", "get", 200>["data"][number];

export type WebhookEventType = WebhookEndpoint["events"][number];

/** A new endpoint: `secret` (`whsec_…`, what verifyWebhook checks deliveries with) is in this answer only. */
export type CreatedWebhookEndpoint = Answer<"/v1/webhooks", "post", 201>;

/** `url`: https (http only where the relayer allows local endpoints). */
export type WebhookEndpointCreateParams = Body<"/v1/webhooks", "post">;

/** GET /v1/executions/:id/callback: the URL an async execution named, and its delivery once final (`webhook_id` null). */
export type ExecutionCallback = Answer<"/v1/executions/{execution_id}/callback", "get", 200>;

/** A delivery's `id` is the `webhook-id` header of every attempt; `webhook_id` is null for an execution's callback. */
export type WebhookDelivery = Answer<"/v1/webhooks/{webhook_id}/deliveries", "get", 200>["data"][number];

/** `status_code`: the receiver's HTTP status; null when none came, and `error` says why. */
export type WebhookAttempt = WebhookDelivery["attempts"][number];

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
