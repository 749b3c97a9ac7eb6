// Schemas of the /v1/webhooks routes, shared by those routes (and the OpenAPI document they make up).
import { TEST_EVENT, WEBHOOK_EVENTS } from "../webhooks/webhook-events.js";
import { nullableTimestamp, timestamp } from "./schemas.js";

export const webhookEvent = { type: "string", enum: [...WEBHOOK_EVENTS] } as const;

export const webhookIdParams = {
  type: "object",
  required: ["webhook_id"],
  properties: { webhook_id: { type: "string", minLength: 1, maxLength: 100 } },
} as const;

export const webhookEndpointObject = {
  type: "object",
  required: ["object", "id", "url", "events", "description", "created_at"],
  properties: {
    object: { const: "webhook_endpoint" },
    id: { type: "string" },
    url: { type: "string" },
    events: { type: "array", items: webhookEvent },
    description: { type: "string" },
    created_at: timestamp,
  },
} as const;

export const webhookDeliveryObject = {
  type: "object",
  // Every field: webhook-endpoints.ts renders each one, null where there is none.
  required: [
    "object", "id", "webhook_id", "event", "execution_id", "status", "attempt_count", "next_attempt_at", "created_at",
    "finished_at", "attempts",
  ],
  properties: {
    object: { const: "webhook_delivery" },
    id: { type: "string", description: "The message id: the `webhook-id` header of every attempt." },
    webhook_id: { type: ["string", "null"], description: "The endpoint; null for an execution's callback." },
    event: { type: "string", enum: [...WEBHOOK_EVENTS, TEST_EVENT] },
    execution_id: { type: ["string", "null"] },
    status: { type: "string", enum: ["pending", "succeeded", "failed"] },
    attempt_count: { type: "integer" },
    next_attempt_at: nullableTimestamp,
    created_at: timestamp,
    finished_at: nullableTimestamp,
    attempts: {
      type: "array",
      items: {
        type: "object",
        required: ["attempt", "started_at", "duration_ms", "status_code", "error"],
        properties: {
          attempt: { type: "integer" },
          started_at: timestamp,
          duration_ms: { type: "integer" },
          status_code: { type: ["integer", "null"] },
          error: { type: ["string", "null"] },
        },
      },
    },
  },
} as const;

export const executionCallbackObject = {
  type: "object",
  required: ["object", "execution_id", "url", "delivery"],
  properties: {
    object: { const: "execution_callback" },
    execution_id: { type: "string" },
    url: { type: "string" },
    delivery: { anyOf: [webhookDeliveryObject, { type: "null" }] },
  },
} as const;
