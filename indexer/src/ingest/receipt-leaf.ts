// The receipt log's hashing, as programs/agent_market/src/receipt_tree.rs and
// state/receipt_log.rs define it: a leaf commits to one execution settled by settle_batch, and
// the log is a sequence of trees of 2^18 leaves. An `EscrowSettledToLog` event carries every field
// of its leaf, so the indexer rebuilds the leaf from the stored event alone.
import { createHash } from "node:crypto";

import { parseExecutionId, splitPayment } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import type { JsonValue } from "./event-row.js";

const bs58 = utils.bytes.bs58;

export const RECEIPT_TREE_DEPTH = 18;
export const TREE_LEAVES = 2 ** RECEIPT_TREE_DEPTH;

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

/** An empty leaf: 32 zero bytes, which no SHA-256 output is known to equal. */
export const EMPTY_LEAF = Buffer.alloc(32);

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash("sha256").update(NODE_PREFIX).update(left).update(right).digest();
}

/** The root of an empty subtree of each height 0‥18: an absent sibling is one of these. */
export const EMPTY_SUBTREES: readonly Buffer[] = (() => {
  const empties: Buffer[] = [EMPTY_LEAF];
  for (let level = 0; level < RECEIPT_TREE_DEPTH; level++) empties.push(nodeHash(empties[level]!, empties[level]!));
  return empties;
})();

/**
 * A leaf's fields in wire form, what open_dispute_from_log takes: bytes as hex, keys base58,
 * integers as decimal strings. The agent is the log's.
 */
export interface ReceiptLeafFields {
  executionId: string;
  payer: string;
  payerTokenAccount: string;
  apiKeyId: string;
  amountUsdc: string;
  feeUsdc: string;
  requestHash: string;
  resultHash: string;
  settledAt: string;
}

/** The 16 bytes of the API key id the decoder wrote as `key_…`, or zeros for a call without a key. */
function apiKeyBytes(apiKeyId: JsonValue | undefined): Buffer {
  if (typeof apiKeyId !== "string") return Buffer.alloc(16);
  return Buffer.from(bs58.decode(apiKeyId.slice("key_".length)));
}

/** The leaf of an `EscrowSettledToLog` event's data (as the decoder stores it). */
export function receiptLeafOf(data: Record<string, JsonValue>): ReceiptLeafFields {
  const executionId = parseExecutionId(String(data.executionId));
  if (!executionId) throw new Error(`EscrowSettledToLog carries no execution id: ${String(data.executionId)}`);
  return {
    executionId: Buffer.from(executionId).toString("hex"),
    payer: String(data.payer),
    payerTokenAccount: String(data.payerTokenAccount),
    apiKeyId: apiKeyBytes(data.apiKeyId).toString("hex"),
    amountUsdc: String(data.amountUsdc),
    feeUsdc: String(data.feeUsdc),
    requestHash: String(data.requestHash),
    resultHash: String(data.resultHash),
    settledAt: String(data.settledAt),
  };
}

function u64Le(value: string, signed = false): Buffer {
  const out = Buffer.alloc(8);
  if (signed) out.writeBigInt64LE(BigInt(value));
  else out.writeBigUInt64LE(BigInt(value));
  return out;
}

/**
 * `SHA-256(0x00 ‖ execution_id ‖ agent ‖ payer ‖ payer_token_account ‖ api_key_id ‖ amount_usdc ‖
 * fee_usdc ‖ request_hash ‖ result_hash ‖ settled_at)`, integers little-endian. The fee is the
 * program's split of the amount (ReceiptLeaf::hash recomputes it), not the event's copy of it.
 */
export function leafHash(agent: string, leaf: ReceiptLeafFields): Buffer {
  const feeUsdc = splitPayment(BigInt(leaf.amountUsdc)).feeUsdc.toString();
  return createHash("sha256")
    .update(LEAF_PREFIX)
    .update(Buffer.from(leaf.executionId, "hex"))
    .update(new PublicKey(agent).toBuffer())
    .update(new PublicKey(leaf.payer).toBuffer())
    .update(new PublicKey(leaf.payerTokenAccount).toBuffer())
    .update(Buffer.from(leaf.apiKeyId, "hex"))
    .update(u64Le(leaf.amountUsdc))
    .update(u64Le(feeUsdc))
    .update(Buffer.from(leaf.requestHash, "hex"))
    .update(Buffer.from(leaf.resultHash, "hex"))
    .update(u64Le(leaf.settledAt, true))
    .digest();
}
