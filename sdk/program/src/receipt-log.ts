// The receipt log read from the chain (docs/program.md, "The receipt log"): its account decoded,
// a leaf hashed and a Merkle proof walked up to a root exactly as receipt_tree.rs and
// state/receipt_log.rs do, so that anyone can check a batched settlement's receipt against the
// roots the agent's log holds on chain, without trusting whoever served the proof.
import { sha256 } from "@noble/hashes/sha2";
import type { Connection, PublicKey } from "@solana/web3.js";

import { decodeAccount, fetchAccount, type FetchOptions } from "./accounts.js";
import { concatBytes, requireLength, toHex, u64Le } from "./bytes.js";
import { integerConstant, splitPayment } from "./program.js";
import type { ReceiptLeaf, ReceiptLog } from "./types.js";

export const RECEIPT_TREE_DEPTH = Number(integerConstant("RECEIPT_TREE_DEPTH"));
/** Leaves of one tree: leaf `i` of the log is leaf `i mod TREE_LEAVES` of tree `i / TREE_LEAVES`. */
export const RECEIPT_TREE_LEAVES = 2n ** BigInt(RECEIPT_TREE_DEPTH);
const RECEIPT_ROOT_HISTORY = Number(integerConstant("RECEIPT_ROOT_HISTORY"));
const RECEIPT_FILLED_TREES = Number(integerConstant("RECEIPT_FILLED_TREES"));
const RECEIPT_CHECKPOINTS = Number(integerConstant("RECEIPT_CHECKPOINTS"));

const LEAF_PREFIX = Uint8Array.of(0);
const NODE_PREFIX = Uint8Array.of(1);

export const decodeReceiptLog = (data: Uint8Array): ReceiptLog => decodeAccount("ReceiptLog", data);

/** The agent's receipt log (at `receiptLogPda(agent, programId)`); null before its first batch created it. */
export function fetchReceiptLog(connection: Connection, address: PublicKey, options: FetchOptions) {
  return fetchAccount(connection, "ReceiptLog", address, options);
}

/**
 * `SHA-256(0x00 ‖ execution_id ‖ agent ‖ nonce ‖ payer ‖ payer_token_account ‖ api_key_id ‖
 * amount_usdc ‖ charged_usdc ‖ fee_usdc ‖ returned_usdc ‖ units ‖ request_hash ‖ result_hash ‖
 * settled_at)`, integers little-endian; the fee is the program's split of the charge, as
 * ReceiptLeaf::hash recomputes it.
 */
export function receiptLeafHash(agent: PublicKey, leaf: ReceiptLeaf): Uint8Array {
  return sha256(
    concatBytes(
      LEAF_PREFIX,
      requireLength("executionId", leaf.executionId, 16),
      agent.toBytes(),
      u64Le("nonce", leaf.nonce),
      leaf.payer.toBytes(),
      leaf.payerTokenAccount.toBytes(),
      requireLength("apiKeyId", leaf.apiKeyId, 16),
      u64Le("amountUsdc", leaf.amountUsdc),
      u64Le("chargedUsdc", leaf.chargedUsdc),
      u64Le("feeUsdc", splitPayment(leaf.chargedUsdc).feeUsdc),
      u64Le("returnedUsdc", leaf.returnedUsdc),
      u64Le("units", leaf.units),
      requireLength("requestHash", leaf.requestHash, 32),
      requireLength("resultHash", leaf.resultHash, 32),
      u64Le("settledAt", BigInt.asUintN(64, leaf.settledAt)),
    ),
  );
}

/** The root `proof` (sibling hashes, bottom up) leads to from `leafHash` at log index `leafIndex`. */
export function receiptRootFromProof(leafHash: Uint8Array, leafIndex: bigint, proof: readonly Uint8Array[]): Uint8Array {
  if (proof.length !== RECEIPT_TREE_DEPTH) throw new RangeError(`a receipt proof has ${RECEIPT_TREE_DEPTH} hashes, got ${proof.length}`);
  let node = requireLength("leafHash", leafHash, 32);
  let index = leafIndex % RECEIPT_TREE_LEAVES;
  for (const sibling of proof) {
    requireLength("proof hash", sibling, 32);
    node = sha256(index % 2n === 0n ? concatBytes(NODE_PREFIX, node, sibling) : concatBytes(NODE_PREFIX, sibling, node));
    index /= 2n;
  }
  return node;
}

/** Whether the log holds `root` among its recent roots, its checkpoints or the roots of its filled trees, as open_dispute checks. */
export function receiptLogHoldsRoot(log: ReceiptLog, root: Uint8Array): boolean {
  const wanted = toHex(root);
  const recent = log.recentRoots.slice(0, Math.min(Number(log.rootCount), RECEIPT_ROOT_HISTORY));
  const checkpoints = log.checkpointRoots.slice(0, Math.min(Number(log.checkpointCount), RECEIPT_CHECKPOINTS));
  const filled = log.filledRoots.slice(0, Math.min(Number(log.filledTreeCount), RECEIPT_FILLED_TREES));
  return [...recent, ...checkpoints, ...filled].some((held) => toHex(held) === wanted);
}
