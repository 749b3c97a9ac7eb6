// The receipt log's hashing, as programs/agent_market/src/receipt_tree.rs and
// state/receipt_log.rs define it: a leaf commits to one escrow settled by settle_batch (its
// execution id, nonce and the rest), and the log is a sequence of trees of 2^18 leaves. An
// `EscrowSettledToLog` event carries every field of its leaf, so the indexer rebuilds the leaf
// from the stored event alone, and keeps it by (agent, leaf index) in `receipt_leaves`.
import { createHash } from "node:crypto";

import { parseExecutionId, receiptLeafHash, receiptLeafOf, type ServedReceiptLeaf } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import type { JsonValue } from "./event-row.js";

const bs58 = utils.bytes.bs58;

export const RECEIPT_TREE_DEPTH = 18;
export const TREE_LEAVES = 2 ** RECEIPT_TREE_DEPTH;

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

/** The 16 bytes of the API key id the decoder wrote as `key_…`, or zeros for a call without a key. */
function apiKeyBytes(apiKeyId: JsonValue | undefined): Buffer {
  if (typeof apiKeyId !== "string") return Buffer.alloc(16);
  return Buffer.from(bs58.decode(apiKeyId.slice("key_".length)));
}

/** The leaf of an `EscrowSettledToLog` event's data (as the decoder stores it). */
export function servedLeafOf(data: Record<string, JsonValue>): ServedReceiptLeaf {
  const executionId = parseExecutionId(String(data.executionId));
  if (!executionId) throw new Error(`EscrowSettledToLog carries no execution id: ${String(data.executionId)}`);
  return {
    executionId: Buffer.from(executionId).toString("hex"),
    nonce: String(data.nonce),
    payer: String(data.payer),
    payerTokenAccount: String(data.payerTokenAccount),
    apiKeyId: apiKeyBytes(data.apiKeyId).toString("hex"),
    amountUsdc: String(data.amountUsdc),
    chargedUsdc: String(data.chargedUsdc),
    feeUsdc: String(data.feeUsdc),
    returnedUsdc: String(data.returnedUsdc),
    units: String(data.units),
    requestHash: String(data.requestHash),
    resultHash: String(data.resultHash),
    settledAt: String(data.settledAt),
  };
}

/**
 * The leaf's hash, as the program computes it (`receiptLeafHash` of @agent-market/program, the
 * one definition the dispute tools check against too).
 */
export function leafHash(agent: string, leaf: ServedReceiptLeaf): Buffer {
  return Buffer.from(receiptLeafHash(new PublicKey(agent), receiptLeafOf(leaf)));
}

/** A `receipt_leaves` row, as the writer stores it. */
export interface LeafRow {
  agent: string;
  leaf_index: string;
  execution_id: string;
  nonce: string;
  leaf: ServedReceiptLeaf;
  leaf_hash: string;
  log_root: string;
  /** The log kept `log_root` as a checkpoint too. */
  checkpoint: boolean;
  signature: string;
}

/** The leaf an `EscrowSettledToLog` event of transaction `signature` appended. */
export function leafRowOf(signature: string, data: Record<string, JsonValue>): LeafRow {
  const agent = String(data.agent);
  const leaf = servedLeafOf(data);
  return {
    agent,
    leaf_index: String(data.leafIndex),
    execution_id: String(data.executionId),
    nonce: String(data.nonce),
    leaf,
    leaf_hash: leafHash(agent, leaf).toString("hex"),
    log_root: String(data.logRoot),
    checkpoint: data.checkpoint === true,
    signature,
  };
}
