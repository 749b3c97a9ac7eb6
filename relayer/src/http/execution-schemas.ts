// Response schemas of the execution and subscription routes, shared by those routes (and the
// OpenAPI document they make up).
import { address, network, nullableTimestamp, timestamp, usdcAmount } from "./schemas.js";

const nullableString = { type: ["string", "null"] } as const;

export const executionObject = {
  type: "object",
  properties: {
    object: { const: "execution" },
    id: { type: "string" },
    agent: address,
    network,
    status: { type: "string", enum: ["pending", "running", "succeeded", "refunded", "failed"] },
    api_key_id: { type: "string" },
    output: {},
    receipt: {
      anyOf: [
        {
          type: "object",
          properties: {
            execution_id: { type: "string" },
            agent: address,
            request_hash: { type: "string" },
            result_hash: { type: "string" },
            digest: { type: "string" },
            creator_signature: { type: "string" },
            creator_public_key: address,
          },
        },
        { type: "null" },
      ],
    },
    charge: {
      type: "object",
      properties: {
        amount_usdc: usdcAmount,
        creator_share_usdc: usdcAmount,
        fee_usdc: usdcAmount,
        currency: { const: "USDC" },
        covered_by_subscription: { type: "boolean" },
      },
    },
    transactions: {
      type: "object",
      properties: {
        escrow: nullableString,
        settlement: nullableString,
        refund: nullableString,
        confirmation: { type: ["string", "null"], enum: ["processed", "confirmed", null] },
      },
    },
    failure: {
      anyOf: [
        { type: "object", properties: { code: { type: "string" }, message: nullableString, refund_reason: nullableString } },
        { type: "null" },
      ],
    },
    escrow_deadline: nullableTimestamp,
    created_at: timestamp,
    finished_at: nullableTimestamp,
    durations_ms: {
      type: "object",
      properties: {
        total: { type: ["integer", "null"] },
        escrow: { type: ["integer", "null"] },
        creator: { type: ["integer", "null"] },
        settlement: { type: ["integer", "null"] },
      },
    },
  },
} as const;

export const subscriptionObject = {
  type: "object",
  properties: {
    object: { const: "subscription" },
    id: { type: "string" },
    status: { type: "string", enum: ["pending", "succeeded"] },
    agent: address,
    wallet: address,
    network,
    expires_at: { ...timestamp, type: ["string", "null"] },
    included_calls_remaining: { type: ["integer", "null"] },
    charge: {
      type: "object",
      properties: {
        amount_usdc: usdcAmount,
        creator_share_usdc: usdcAmount,
        fee_usdc: usdcAmount,
        currency: { const: "USDC" },
      },
    },
    transaction: { type: "string" },
  },
} as const;
