// The receipt log read from the chain: a log account decoded from its bytes (a zero-copy account,
// whose C layout has no padding, so borsh reads it as the program wrote it), proofs walked up
// in the leaf's order, and only the roots the log keeps count.
import assert from "node:assert/strict";

import { sha256 } from "@noble/hashes/sha2";
import { Keypair } from "@solana/web3.js";

import {
  IDL,
  decodeReceiptLog,
  receiptLeafHash,
  receiptLogHoldsRoot,
  receiptRootFromProof,
  RECEIPT_TREE_DEPTH,
  type ReceiptLeaf,
} from "../src/index.js";

const node = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.from([1, ...left, ...right]));
/** The root of an empty subtree of each height, as receipt_tree.rs has them. */
const EMPTY: Uint8Array[] = [new Uint8Array(32)];
for (let level = 0; level < RECEIPT_TREE_DEPTH; level++) EMPTY.push(node(EMPTY[level]!, EMPTY[level]!));

const LOG_BYTES = 7_336;

function logBytes(agent: Keypair, rootCount: bigint, roots: Uint8Array[], checkpoints: Uint8Array[] = []): Uint8Array {
  const data = new Uint8Array(LOG_BYTES);
  data.set(IDL.accounts.find((a) => a.name === "ReceiptLog")!.discriminator, 0);
  data.set(agent.publicKey.toBytes(), 8);
  const view = new DataView(data.buffer);
  view.setBigUint64(8 + 32 + 8, rootCount, true);
  view.setBigUint64(8 + 32 + 24, BigInt(checkpoints.length), true);
  // agent, leaf_count, root_count, filled_tree_count, checkpoint_count, last_checkpoint_at, then
  // the 18 frontier hashes, the 64 recent roots, the 64 filled roots and the 64 checkpoints.
  const recentAt = 8 + 32 + 40 + 32 * RECEIPT_TREE_DEPTH;
  roots.forEach((root, i) => data.set(root, recentAt + 32 * i));
  checkpoints.forEach((root, i) => data.set(root, recentAt + 2 * 64 * 32 + 32 * i));
  return data;
}

describe("receipt log", () => {
  const a = sha256(Uint8Array.of(7));
  const b = sha256(Uint8Array.of(8));
  let root = node(a, b);
  for (let level = 1; level < RECEIPT_TREE_DEPTH; level++) root = node(root, EMPTY[level]!);

  it("walks a proof up from either side of a pair to the same root", () => {
    assert.deepEqual(receiptRootFromProof(a, 0n, [b, ...EMPTY.slice(1, RECEIPT_TREE_DEPTH)]), root);
    assert.deepEqual(receiptRootFromProof(b, 1n, [a, ...EMPTY.slice(1, RECEIPT_TREE_DEPTH)]), root);
    // Leaf 2^18 + 1 is leaf 1 of the second tree.
    assert.deepEqual(receiptRootFromProof(b, 2n ** 18n + 1n, [a, ...EMPTY.slice(1, RECEIPT_TREE_DEPTH)]), root);
    assert.notDeepEqual(receiptRootFromProof(a, 1n, [b, ...EMPTY.slice(1, RECEIPT_TREE_DEPTH)]), root, "the index orders each pair");
    assert.throws(() => receiptRootFromProof(a, 0n, [b]), { name: "RangeError", message: "a receipt proof has 18 hashes, got 1" });
  });

  it("decodes the log account and holds only the roots it recorded", () => {
    const agent = Keypair.generate();
    const log = decodeReceiptLog(logBytes(agent, 1n, [root, b]));
    assert.equal(log.agent.toBase58(), agent.publicKey.toBase58());
    assert.equal(log.rootCount, 1n);
    assert.equal(receiptLogHoldsRoot(log, root), true);
    assert.equal(receiptLogHoldsRoot(log, b), false, "a slot past root_count is not a root");
    assert.equal(receiptLogHoldsRoot(log, new Uint8Array(32)), false, "unused slots hold nothing");
  });

  it("holds a checkpoint root that no recent root is any more", () => {
    const log = decodeReceiptLog(logBytes(Keypair.generate(), 1n, [root], [b]));
    assert.equal(log.checkpointCount, 1n);
    assert.equal(receiptLogHoldsRoot(log, b), true);
    assert.equal(receiptLogHoldsRoot(decodeReceiptLog(logBytes(Keypair.generate(), 1n, [root])), b), false);
  });

  it("hashes a leaf with what it held, charged and returned, and the fee the program splits from the charge", () => {
    const agent = Keypair.generate().publicKey;
    const leaf: ReceiptLeaf = {
      executionId: new Uint8Array(16).fill(1),
      nonce: 0x0102030405060708n,
      payer: Keypair.generate().publicKey,
      payerTokenAccount: Keypair.generate().publicKey,
      apiKeyId: new Uint8Array(16).fill(2),
      amountUsdc: 250_000n,
      chargedUsdc: 240_000n,
      returnedUsdc: 10_000n,
      units: 9n,
      requestHash: new Uint8Array(32).fill(3),
      resultHash: new Uint8Array(32).fill(4),
      settledAt: 1_700_000_000n,
    };
    const le = (value: bigint) => {
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigUint64(0, value, true);
      return out;
    };
    const expected = sha256(
      Uint8Array.from([
        0, ...leaf.executionId, ...agent.toBytes(), 8, 7, 6, 5, 4, 3, 2, 1, ...leaf.payer.toBytes(), ...leaf.payerTokenAccount.toBytes(),
        ...leaf.apiKeyId, ...le(250_000n), ...le(240_000n), ...le(2_400n), ...le(10_000n), ...le(9n), ...leaf.requestHash, ...leaf.resultHash, ...le(1_700_000_000n),
      ]),
    );
    assert.deepEqual(receiptLeafHash(agent, leaf), expected);
    assert.notDeepEqual(receiptLeafHash(agent, { ...leaf, nonce: 0n }), expected, "two escrows of one id are two leaves");
    assert.throws(() => receiptLeafHash(agent, { ...leaf, units: -1n }), { name: "RangeError", message: "units must be a u64 bigint, got -1" });
  });
});
