// Response schemas of the execution and subscription routes, shared by those routes (and the
// OpenAPI document they make up).
import { address, network, nullableTimestamp, timestamp, usdcAmount } from "./schemas.js";

const nullableString = { type: ["string", "null"] } as const;
/** A u64 as a decimal string without leading zeros. */
const u64String = { type: "string", pattern: "^(0|[1-9][0-9]{0,19})$" } as const;

export const executionObject = {
  type: "object",
  // Every field: execution-view.ts's renderExecution always has each one (output null until succeeded).
  required: [
    "object", "id", "agent", "network", "status", "api_key_id", "output", "receipt", "charge", "transactions", "failure",
    "escrow_deadline", "created_at", "finished_at", "durations_ms",
  ],
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
          // What the creator's signature binds (docs/execute-protocol.md, "Result digest"): the
          // escrow's fields and the result's, from which a client rebuilds `digest` itself.
          required: [
            "protocol_version", "execution_id", "agent", "escrow_nonce", "payer", "payer_token_account", "amount_usdc",
            "request_hash", "result_hash", "units", "digest", "creator_signature", "creator_public_key",
          ],
          properties: {
            protocol_version: { const: 2 },
            execution_id: { type: "string" },
            agent: address,
            escrow_nonce: u64String,
            payer: address,
            payer_token_account: address,
            amount_usdc: usdcAmount,
            request_hash: { type: "string" },
            result_hash: { type: "string" },
            units: u64String,
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
      required: [
        "amount_usdc", "charged_usdc", "held_usdc", "returned_usdc", "units", "price_per_unit_usdc", "max_units",
        "creator_share_usdc", "fee_usdc", "currency", "covered_by_subscription",
      ],
      properties: {
        /** What the call was charged: the same as charged_usdc, the name clients of fixed prices know. */
        amount_usdc: usdcAmount,
        charged_usdc: usdcAmount,
        /** What the escrow held (null before it opened): a fixed price, or the most a metered call may cost. */
        held_usdc: { anyOf: [usdcAmount, { type: "null" }] },
        /** Back to the payer: a metered call's unused units at settlement, or the whole escrow refunded. */
        returned_usdc: usdcAmount,
        /** The units the creator signed (null until it answered): a metered call is charged by them. */
        units: { anyOf: [u64String, { type: "null" }] },
        /** A metered call's price per unit and the most units its escrow holds the price of; null for a fixed price. */
        price_per_unit_usdc: { anyOf: [usdcAmount, { type: "null" }] },
        max_units: { anyOf: [u64String, { type: "null" }] },
        creator_share_usdc: usdcAmount,
        fee_usdc: usdcAmount,
        currency: { const: "USDC" },
        covered_by_subscription: { type: "boolean" },
      },
    },
    transactions: {
      type: "object",
      required: ["escrow", "settlement", "refund", "confirmation"],
      properties: {
        escrow: nullableString,
        settlement: nullableString,
        refund: nullableString,
        confirmation: { type: ["string", "null"], enum: ["processed", "confirmed", null] },
      },
    },
    failure: {
      anyOf: [
        {
          type: "object",
          required: ["code", "message", "refund_reason"],
          properties: { code: { type: "string" }, message: nullableString, refund_reason: nullableString },
        },
        { type: "null" },
      ],
    },
    escrow_deadline: nullableTimestamp,
    created_at: timestamp,
    finished_at: nullableTimestamp,
    durations_ms: {
      type: "object",
      required: ["total", "escrow", "creator", "settlement"],
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
  // Every field: subscription-service.ts's renderPurchase always has each one.
  required: ["object", "id", "status", "agent", "wallet", "network", "expires_at", "included_calls_remaining", "charge", "transaction"],
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
      required: ["amount_usdc", "creator_share_usdc", "fee_usdc", "currency"],
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
