import type { FastifyInstance } from "fastify";

import type { Services } from "../app.js";
import { requireApiKey } from "../http/auth.js";
import { address, errorResponses, network, nullableTimestamp, timestamp, usdcAmount } from "../http/schemas.js";

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

/** GET /v1/executions/:execution_id: one of the calling wallet's executions. */
export function registerExecutionsGet(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { execution_id: string } }>(
    "/v1/executions/:execution_id",
    {
      schema: {
        summary: "Get an execution",
        description: "Any key of the wallet that paid can read it; other wallets get 404.",
        tags: ["executions"],
        security: [{ apiKey: [] }],
        params: {
          type: "object",
          required: ["execution_id"],
          properties: { execution_id: { type: "string", pattern: "^exec_[1-9A-HJ-NP-Za-km-z]{16,24}$" } },
        },
        response: { 200: executionObject, ...errorResponses(400, 401, 404) },
      },
      preHandler: requireApiKey(services.authenticator),
    },
    async (request) => services.executions.get(request.apiKey!.wallet, request.params.execution_id),
  );
}
