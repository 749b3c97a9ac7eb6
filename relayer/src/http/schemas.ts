// JSON Schemas shared by the routes: they validate requests, shape responses and make up the
// OpenAPI document, so the reference cannot drift from the code.
import { NETWORK_NAMES, USDC_WIRE_PATTERN } from "@agent-market/program";

import { ERROR_CODES } from "../errors.js";
import { PRICING_SCHEMA } from "../listings/pricing.js";

export const usdcAmount = { type: "string", pattern: USDC_WIRE_PATTERN, examples: ["12.500000"] } as const;
export const timestamp = { type: "string", format: "date-time" } as const;
export const nullableTimestamp = { type: ["string", "null"], format: "date-time" } as const;
export const address = { type: "string", minLength: 32, maxLength: 44, pattern: "^[1-9A-HJ-NP-Za-km-z]+$" } as const;
export const network = { type: "string", enum: NETWORK_NAMES } as const;

export const errorResponse = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["type", "code", "message", "request_id"],
      additionalProperties: true,
      properties: {
        type: { type: "string" },
        code: { type: "string", enum: Object.keys(ERROR_CODES) },
        message: { type: "string" },
        param: { type: "string" },
        request_id: { type: "string" },
      },
    },
  },
} as const;

/** The error statuses a route can answer, all with the one error shape. */
export function errorResponses(...statuses: number[]): Record<number, typeof errorResponse> {
  return Object.fromEntries([...new Set([...statuses, 500])].map((status) => [status, errorResponse]));
}

export const paginationQuery = {
  limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
  starting_after: { type: "string", minLength: 1, maxLength: 100 },
} as const;

export function listOf<T extends object>(item: T) {
  return {
    type: "object",
    required: ["object", "data", "has_more"],
    properties: { object: { const: "list" }, data: { type: "array", items: item }, has_more: { type: "boolean" } },
  } as const;
}

export const apiKeyObject = {
  type: "object",
  // Every field: api-keys.ts's ApiKeyObject always has each one.
  required: [
    "object", "id", "name", "environment", "network", "wallet", "prefix", "last4", "status", "created_at", "last_used_at",
    "execution_count", "spent_usdc", "spending_cap_usdc", "expires_at", "revoked_at",
  ],
  properties: {
    object: { const: "api_key" },
    id: { type: "string" },
    name: { type: "string" },
    environment: { type: "string", enum: ["test", "live"] },
    network,
    wallet: address,
    prefix: { type: "string", enum: ["svc_test_", "svc_live_"] },
    last4: { type: "string" },
    status: { type: "string", enum: ["active", "revoked", "expired"] },
    created_at: timestamp,
    last_used_at: nullableTimestamp,
    execution_count: { type: "integer" },
    spent_usdc: usdcAmount,
    spending_cap_usdc: { anyOf: [usdcAmount, { type: "null" }] },
    expires_at: nullableTimestamp,
    revoked_at: nullableTimestamp,
  },
} as const;

export const pricing = PRICING_SCHEMA;

/** Any JSON Schema document; kept whole in responses. */
export const jsonSchemaDocument = { type: "object", additionalProperties: true } as const;

/** An agent's status and figures from the network's indexer (indexer/indexer-client.ts). */
const agentHealth = {
  type: "object",
  required: ["status", "success_rate_24h", "executions_24h", "latency_p50_secs", "latency_p95_secs"],
  properties: {
    status: { type: "string", enum: ["operational", "degraded", "down", "no_data", "unknown"] },
    success_rate_24h: { anyOf: [{ type: "number" }, { type: "null" }] },
    executions_24h: { anyOf: [{ type: "integer" }, { type: "null" }] },
    latency_p50_secs: { anyOf: [{ type: "number" }, { type: "null" }] },
    latency_p95_secs: { anyOf: [{ type: "number" }, { type: "null" }] },
  },
} as const;

export const listingObject = {
  type: "object",
  // Every field: listing-service.ts's ListingObject always has each one.
  required: [
    "object", "id", "network", "creator", "name", "description", "tags", "pricing", "input_schema", "output_schema",
    "endpoint", "signing_key", "max_execution_secs", "collateral_usdc", "minimum_collateral_usdc", "listing_hash",
    "status", "pause_reason", "circuit", "created_at", "updated_at", "last_probe",
  ],
  properties: {
    object: { const: "agent" },
    id: address,
    network,
    creator: address,
    name: { type: "string" },
    description: { type: "string" },
    tags: { type: "array", items: { type: "string" } },
    pricing: { type: "object", additionalProperties: true },
    input_schema: jsonSchemaDocument,
    output_schema: jsonSchemaDocument,
    endpoint: { type: "string" },
    signing_key: address,
    max_execution_secs: { type: "integer" },
    collateral_usdc: usdcAmount,
    minimum_collateral_usdc: usdcAmount,
    listing_hash: { type: "string" },
    status: { type: "string", enum: ["active", "paused", "retired"] },
    pause_reason: {
      type: ["string", "null"],
      enum: ["creator", "endpoint_changed", "terms_changed", null],
      description:
        "Why a paused listing is paused: by its creator, or by the relayer because the agent's account names an endpoint the listing never probed (endpoint_changed) or pricing or a listing hash other than the verified listing's (terms_changed: a PATCH listing the new terms brings it back).",
    },
    circuit: {
      type: "object",
      required: ["state", "opened_at", "retry_at"],
      description:
        "The agent's circuit breaker over the refunds its creator caused: open refuses executions until retry_at, half_open lets one probe call through.",
      properties: {
        state: { type: "string", enum: ["closed", "open", "half_open"] },
        opened_at: nullableTimestamp,
        retry_at: nullableTimestamp,
      },
    },
    created_at: timestamp,
    updated_at: timestamp,
    last_probe: {
      anyOf: [
        { type: "object", required: ["at", "latency_ms"], properties: { at: timestamp, latency_ms: { type: "integer" } } },
        { type: "null" },
      ],
    },
  },
} as const;

/** A listing as discovery shows it: with its `health` from the indexer. */
export const discoveredListingObject = {
  ...listingObject,
  required: [...listingObject.required, "health"],
  properties: { ...listingObject.properties, health: agentHealth },
} as const;

export const agentIdParams = {
  type: "object",
  required: ["agent_id"],
  properties: { agent_id: address },
} as const;

export const networkQuery = {
  type: "object",
  additionalProperties: false,
  properties: { network: { ...network, default: "devnet" } },
} as const;

/** A wallet's web runs on one network: whether sessions may run agents, and their cap. */
export const webRunSettings = {
  type: "object",
  required: ["object", "network", "key_id", "enabled", "spending_cap_usdc", "spent_usdc", "execution_count", "revoked_at"],
  properties: {
    object: { const: "web_runs" },
    network,
    key_id: { type: "string" },
    enabled: { type: "boolean" },
    spending_cap_usdc: usdcAmount,
    spent_usdc: usdcAmount,
    execution_count: { type: "integer" },
    revoked_at: nullableTimestamp,
  },
} as const;
