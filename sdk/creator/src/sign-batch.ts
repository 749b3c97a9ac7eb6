// `POST /sign-batch` once the request is authenticated (docs/execute-protocol.md, "Batch
// signatures"): one signature over the batch digest of results this key already signed one by
// one. Stateless: each item carries its per-call signature, which proves the key signed that
// result digest (execute protocol v2: bound to its escrow and units) for that agent, so the
// service needs no memory of past calls.
import {
  MAX_SETTLE_BATCH,
  ed25519Sign,
  ed25519Verify,
  fromHex,
  parseAddress,
  parseDecimalU64,
  parseExecutionId,
  parseWireUsdc,
  signBatchDigest,
  signBatchItemDigest,
  toHex,
  type SignBatchItem,
  type SignBatchRequest,
  type SignBatchResponse,
} from "@agent-market/program";

import { errorResponse, type ErrorBody, type ServiceResponse } from "./responses.js";

const HASH_HEX = /^[0-9a-f]{64}$/;
const SIGNATURE_HEX = /^[0-9a-f]{128}$/;

function isWireUsdc(value: unknown): boolean {
  try {
    return typeof value === "string" && parseWireUsdc(value) >= 0n;
  } catch {
    return false;
  }
}

/** What is wrong with an item, or null. */
function itemProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "is not a JSON object";
  const item = value as Record<string, unknown>;
  if (typeof item.execution_id !== "string" || !parseExecutionId(item.execution_id)) {
    return "execution_id is not exec_ and the base58 of 16 bytes";
  }
  if (parseDecimalU64(item.escrow_nonce) === null) return "escrow_nonce is not the decimal string of a u64";
  for (const field of ["payer", "payer_token_account"] as const) {
    if (typeof item[field] !== "string" || !parseAddress(item[field])) return `${field} is not a base58 address`;
  }
  if (!isWireUsdc(item.amount_usdc)) return "amount_usdc is not USDC with 6 decimals";
  if (parseDecimalU64(item.units) === null) return "units is not the decimal string of a u64";
  if (typeof item.request_hash !== "string" || !HASH_HEX.test(item.request_hash)) {
    return "request_hash is not 64 lowercase hex characters";
  }
  if (typeof item.result_hash !== "string" || !HASH_HEX.test(item.result_hash)) {
    return "result_hash is not 64 lowercase hex characters";
  }
  if (typeof item.signature !== "string" || !SIGNATURE_HEX.test(item.signature)) {
    return "signature is not 128 lowercase hex characters";
  }
  return null;
}

/** The request, or the 400 to answer. */
function parseSignBatchBody(body: unknown): SignBatchRequest | ServiceResponse<ErrorBody> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return errorResponse(400, "invalid_request", "the body is not a JSON object");
  }
  const b = body as Record<string, unknown>;
  if (typeof b.agent !== "string" || !parseAddress(b.agent)) {
    return errorResponse(400, "invalid_request", "agent is not a base58 address");
  }
  if (!Array.isArray(b.items)) return errorResponse(400, "invalid_request", "items is not an array");
  if (b.items.length === 0) return errorResponse(400, "empty_batch", "items is empty: a batch signs 1 or more results");
  if (b.items.length > MAX_SETTLE_BATCH) {
    return errorResponse(400, "batch_too_large", `items has ${b.items.length} results; settle_batch takes at most ${MAX_SETTLE_BATCH}`);
  }
  const seen = new Set<string>();
  for (const [i, item] of b.items.entries()) {
    const problem = itemProblem(item);
    if (problem) return errorResponse(400, "invalid_request", `items[${i}]: ${problem}`);
    const executionId = (item as SignBatchItem).execution_id;
    // The program settles an escrow once: a batch naming one twice cannot be what it signs for.
    if (seen.has(executionId)) {
      return errorResponse(400, "duplicate_execution", `items[${i}]: execution ${executionId} is already in the batch`);
    }
    seen.add(executionId);
  }
  return { agent: b.agent, items: b.items as SignBatchItem[] };
}

export interface BatchSignerOptions {
  signingKey: Uint8Array;
  /** The 32-byte public key of `signingKey`. */
  publicKey: Uint8Array;
  servedAgents: ReadonlySet<string>;
}

/** Answers an authenticated `/sign-batch` body: 200 with the batch signature, or why not. */
export function batchSigner(options: BatchSignerOptions): (body: unknown) => ServiceResponse {
  return (body) => {
    const parsed = parseSignBatchBody(body);
    if ("status" in parsed) return parsed;
    if (!options.servedAgents.has(parsed.agent)) {
      return errorResponse(403, "agent_not_served", `this service does not answer for agent ${parsed.agent}`);
    }
    for (const [i, item] of parsed.items.entries()) {
      // Only a result this key signed for this agent may be counted: the batch signature pays for it.
      if (!ed25519Verify(fromHex(item.signature), signBatchItemDigest(parsed.agent, item), options.publicKey)) {
        return errorResponse(
          422,
          "unknown_result_signature",
          `items[${i}]: signature is not this service's signature of execution ${item.execution_id}'s result for agent ${parsed.agent}`,
        );
      }
    }
    const digest = signBatchDigest(parsed);
    const answer: SignBatchResponse = { digest: toHex(digest), signature: toHex(ed25519Sign(options.signingKey, digest)) };
    return { status: 200, body: answer };
  };
}
