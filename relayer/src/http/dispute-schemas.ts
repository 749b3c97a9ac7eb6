// JSON Schemas of the dispute routes: evidence in, disputes out.
import {
  MAX_ATTACHMENT_NAME_CHARS,
  MAX_ATTACHMENTS,
  MAX_STATEMENT_CHARS,
} from "../disputes/dispute-evidence.js";
import { address, network, nullableTimestamp, timestamp, usdcAmount } from "./schemas.js";

export const executionId = { type: "string", pattern: "^exec_[1-9A-HJ-NP-Za-km-z]{16,24}$" } as const;
export const evidenceId = { type: "string", pattern: "^evd_[1-9A-HJ-NP-Za-km-z]{16,24}$" } as const;
const sha256Hex = { type: "string", pattern: "^[0-9a-f]{64}$" } as const;
/** type/subtype with optional parameters, as a Content-Type header carries it. */
const contentType = {
  type: "string",
  minLength: 3,
  maxLength: 200,
  pattern: "^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;\\s*[A-Za-z0-9!#$&^_.+-]+=(\"[^\"\\r\\n]*\"|[A-Za-z0-9!#$&^_.+-]+))*$",
} as const;

export const evidenceBody = {
  type: "object",
  required: ["execution_id", "statement"],
  additionalProperties: false,
  properties: {
    execution_id: executionId,
    statement: { type: "string", minLength: 1, maxLength: MAX_STATEMENT_CHARS },
    attachments: {
      type: "array",
      maxItems: MAX_ATTACHMENTS,
      items: {
        type: "object",
        required: ["name", "content_type", "content_base64"],
        additionalProperties: false,
        properties: {
          name: { type: "string", minLength: 1, maxLength: MAX_ATTACHMENT_NAME_CHARS },
          content_type: contentType,
          content_base64: { type: "string" },
        },
      },
    },
  },
} as const;

export const evidenceCreated = {
  type: "object",
  required: ["object", "evidence_id", "execution_id", "role", "evidence_hash", "created_at"],
  properties: {
    object: { const: "dispute_evidence" },
    evidence_id: evidenceId,
    execution_id: executionId,
    role: { type: "string", enum: ["payer", "creator"] },
    evidence_hash: sha256Hex,
    created_at: timestamp,
  },
} as const;

export const disputeObject = {
  type: "object",
  // Every field: dispute-service.ts renders each one, null where there is none yet.
  required: [
    "object", "execution_id", "network", "agent", "leaf_index", "payer", "creator", "state", "amount_usdc", "slashed_usdc", "evidence_hash",
    "opened_at", "resolved_at", "resolve_transaction", "evidence",
  ],
  properties: {
    object: { const: "dispute" },
    execution_id: executionId,
    network,
    agent: address,
    // The dispute is the one of this leaf of the agent's receipt log (u64, decimal): null until read.
    leaf_index: { anyOf: [{ type: "string", pattern: "^(0|[1-9][0-9]{0,19})$" }, { type: "null" }] },
    payer: address,
    creator: { anyOf: [address, { type: "null" }] },
    state: { type: "string", enum: ["none", "open", "upheld", "rejected"] },
    amount_usdc: usdcAmount,
    slashed_usdc: { anyOf: [usdcAmount, { type: "null" }] },
    evidence_hash: { anyOf: [sha256Hex, { type: "null" }] },
    opened_at: nullableTimestamp,
    resolved_at: nullableTimestamp,
    resolve_transaction: { type: ["string", "null"] },
    evidence: {
      type: "array",
      items: {
        type: "object",
        required: ["evidence_id", "role", "wallet", "evidence_hash", "bound_on_chain", "statement", "attachments", "created_at"],
        properties: {
          evidence_id: evidenceId,
          role: { type: "string", enum: ["payer", "creator"] },
          wallet: address,
          evidence_hash: sha256Hex,
          bound_on_chain: { type: "boolean" },
          statement: { type: "string" },
          attachments: {
            type: "array",
            items: {
              type: "object",
              required: ["index", "name", "content_type", "size_bytes", "sha256"],
              properties: {
                index: { type: "integer" },
                name: { type: "string" },
                content_type: { type: "string" },
                size_bytes: { type: "integer" },
                sha256: sha256Hex,
              },
            },
          },
          created_at: timestamp,
        },
      },
    },
  },
} as const;
