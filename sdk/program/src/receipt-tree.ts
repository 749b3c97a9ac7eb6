// A receipt log tree's root and a leaf's proof computed from the leaves themselves, as
// receipt_tree.rs defines the tree: 2^RECEIPT_TREE_DEPTH leaves, the ones not appended yet
// empty (32 zero bytes), inner nodes SHA-256(0x01 ‖ left ‖ right). What a payer rebuilds from the
// chain's events when no indexer serves the proof.
import { sha256 } from "@noble/hashes/sha2";

import { concatBytes, requireLength } from "./bytes.js";
import { RECEIPT_TREE_DEPTH, RECEIPT_TREE_LEAVES } from "./receipt-log.js";

const NODE_PREFIX = Uint8Array.of(1);

function node(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(concatBytes(NODE_PREFIX, left, right));
}

/** The root of an empty subtree at each level: 32 zero bytes, then the node of two of the level below. */
const EMPTY_SUBTREES: readonly Uint8Array[] = (() => {
  const out: Uint8Array[] = [new Uint8Array(32)];
  for (let level = 1; level <= RECEIPT_TREE_DEPTH; level++) out.push(node(out[level - 1]!, out[level - 1]!));
  return out;
})();

/**
 * The root over `leafHashes` (the first leaves of one tree, in order) and the sibling hashes,
 * bottom up, of the leaf at `position` within the tree: the proof open_dispute takes.
 */
export function receiptTreeProof(leafHashes: readonly Uint8Array[], position: number): { root: Uint8Array; proof: Uint8Array[] } {
  if (BigInt(leafHashes.length) > RECEIPT_TREE_LEAVES) {
    throw new RangeError(`a receipt tree holds at most ${RECEIPT_TREE_LEAVES} leaves, got ${leafHashes.length}`);
  }
  if (!Number.isInteger(position) || position < 0 || position >= leafHashes.length) {
    throw new RangeError(`position ${position} is not a leaf of the ${leafHashes.length} given`);
  }
  let level = leafHashes.map((leaf, i) => requireLength(`leafHashes[${i}]`, leaf, 32));
  let index = position;
  const proof: Uint8Array[] = [];
  for (let depth = 0; depth < RECEIPT_TREE_DEPTH; depth++) {
    const empty = EMPTY_SUBTREES[depth]!;
    proof.push(level[index ^ 1] ?? empty);
    const above: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) above.push(node(level[i]!, level[i + 1] ?? empty));
    level = above;
    index >>= 1;
  }
  return { root: level[0]!, proof };
}
