// The kept tree, extended leaf batch by leaf batch, gives the root and proofs of the tree built
// at once from all its leaves (as receipt_tree.rs's test builds it), whatever the batches.
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";

import { Tree } from "../src/graphql/receipt-trees.js";
import { EMPTY_SUBTREES, nodeHash, RECEIPT_TREE_DEPTH } from "../src/ingest/receipt-leaf.js";

const leaf = (n: number) => createHash("sha256").update(Buffer.from([0, n & 0xff, n >> 8])).digest();

/** Root of the leaves, level by level, each level padded with the empty subtree of its height. */
function rootAtOnce(leaves: Buffer[]): Buffer {
  let level = leaves;
  for (let height = 0; height < RECEIPT_TREE_DEPTH; height++) {
    const above: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) above.push(nodeHash(level[i]!, level[i + 1] ?? EMPTY_SUBTREES[height]!));
    level = above;
  }
  return level[0] ?? EMPTY_SUBTREES[RECEIPT_TREE_DEPTH]!;
}

function rootFromProof(hash: Buffer, index: number, proof: Buffer[]): Buffer {
  return proof.reduce((node, sibling, level) => ((index >> level) & 1 ? nodeHash(sibling, node) : nodeHash(node, sibling)), hash);
}

describe("receipt tree", () => {
  it("an empty tree's root is the empty subtree of height 18", () => {
    assert.deepEqual(new Tree().root(), rootAtOnce([]));
  });

  for (const batches of [[1], [1, 1, 1, 1, 1], [3, 5, 2, 7], [16, 1], [2, 14, 17]]) {
    it(`appended in batches of ${batches.join(", ")} it equals the tree built at once, and every proof leads to its root`, () => {
      const tree = new Tree();
      const leaves: Buffer[] = [];
      for (const size of batches) {
        const batch = Array.from({ length: size }, (_, i) => leaf(leaves.length + i));
        tree.append(batch);
        leaves.push(...batch);
        const root = rootAtOnce(leaves);
        assert.deepEqual(tree.root(), root, `${leaves.length} leaves`);
        leaves.forEach((hash, index) => {
          const proof = tree.proof(index);
          assert.equal(proof.length, RECEIPT_TREE_DEPTH);
          assert.deepEqual(rootFromProof(hash, index, proof), root);
          assert.notDeepEqual(rootFromProof(hash, index ^ 1, proof), root);
        });
      }
    });
  }

  it("gives the root and proofs of the tree as it stood at any earlier leaf count: a checkpoint's", () => {
    const tree = new Tree();
    const leaves = Array.from({ length: 37 }, (_, i) => leaf(i));
    tree.append(leaves);
    for (const count of [1, 2, 3, 8, 13, 32, 33, 37]) {
      const root = rootAtOnce(leaves.slice(0, count));
      assert.deepEqual(tree.rootWhen(count), root, `${count} leaves`);
      for (let index = 0; index < count; index++) assert.deepEqual(rootFromProof(leaves[index]!, index, tree.proof(index, count)), root);
    }
  });
});
