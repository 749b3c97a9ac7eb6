// The receipt tree rebuilt from its leaves (a payer's proof without the indexer) against the
// proof walker the program mirrors, and the escrow binding of settle_batch's Ed25519 check.
import assert from "node:assert/strict";

import { sha256 } from "@noble/hashes/sha2";
import { Keypair } from "@solana/web3.js";

import {
  disputePda,
  ed25519Sign,
  PROGRAM_ID,
  RECEIPT_TREE_DEPTH,
  receiptRootFromProof,
  receiptTreeProof,
  resultDigest,
  settleBatchInstructions,
  type EscrowBinding,
} from "../src/index.js";

const leaves = Array.from({ length: 5 }, (_, i) => sha256(Uint8Array.of(0, i)));

describe("receiptTreeProof", () => {
  it("gives every leaf a proof that walks up to the root over the leaves given", () => {
    for (let count = 1; count <= leaves.length; count++) {
      const given = leaves.slice(0, count);
      const { root } = receiptTreeProof(given, 0);
      for (let i = 0; i < count; i++) {
        const { root: same, proof } = receiptTreeProof(given, i);
        assert.equal(proof.length, RECEIPT_TREE_DEPTH);
        assert.deepEqual(same, root);
        assert.deepEqual(receiptRootFromProof(given[i]!, BigInt(i), proof), root, `leaf ${i} of ${count}`);
      }
    }
  });

  it("changes its root with each leaf appended", () => {
    assert.notDeepEqual(receiptTreeProof(leaves.slice(0, 2), 0).root, receiptTreeProof(leaves.slice(0, 3), 0).root);
  });

  it("refuses a position outside the leaves and mis-sized leaves", () => {
    assert.throws(() => receiptTreeProof(leaves, 5), { name: "RangeError", message: "position 5 is not a leaf of the 5 given" });
    assert.throws(() => receiptTreeProof([], 0), { name: "RangeError", message: "position 0 is not a leaf of the 0 given" });
    assert.throws(() => receiptTreeProof([new Uint8Array(31)], 0), { name: "RangeError", message: "leafHashes[0] must be 32 bytes, got 31" });
  });
});

describe("disputePda", () => {
  it("refuses a leaf index that is not a u64 bigint", () => {
    const agent = Keypair.generate().publicKey;
    assert.throws(() => disputePda(agent, -1n, PROGRAM_ID), { name: "RangeError", message: "leafIndex must be a u64 bigint, got -1" });
    assert.throws(() => disputePda(agent, 1n << 64n, PROGRAM_ID), { name: "RangeError", message: "leafIndex must be a u64 bigint, got 18446744073709551616" });
    assert.throws(() => disputePda(agent, 3 as never, PROGRAM_ID), { name: "RangeError", message: "leafIndex must be a u64 bigint, got 3" });
  });
});

describe("settleBatchInstructions", () => {
  const creator = Keypair.generate();
  const agent = Keypair.generate().publicKey;
  const escrow = (nonce: bigint): EscrowBinding => ({
    executionId: new Uint8Array(16).fill(1),
    agent,
    nonce,
    payer: Keypair.generate().publicKey,
    payerTokenAccount: Keypair.generate().publicKey,
    amountUsdc: 250_000n,
    requestHash: new Uint8Array(32).fill(2),
  });
  const item = { resultHash: new Uint8Array(32).fill(3), units: 0n };
  const base = {
    programId: PROGRAM_ID,
    relayer: Keypair.generate().publicKey,
    usdcMint: Keypair.generate().publicKey,
    agent,
    payoutAccount: Keypair.generate().publicKey,
    feeShardIndex: 0,
    signingKey: creator.publicKey.toBytes(),
  };

  it("verifies the call's signature over the v2 digest of the escrow it was given for", () => {
    const first = escrow(0n);
    const signature = ed25519Sign(creator.secretKey, resultDigest({ escrow: first, ...item }));
    const [verify] = settleBatchInstructions({ ...base, escrows: [first], items: [item], signed: { kind: "call", signature } });
    // Ed25519 instruction data ends with the message: the digest of this escrow, not another's.
    assert.deepEqual(verify.data.subarray(verify.data.length - 32), Buffer.from(resultDigest({ escrow: first, ...item })));
    const reopened = { ...first, nonce: 1n };
    assert.notDeepEqual(resultDigest({ escrow: reopened, ...item }), resultDigest({ escrow: first, ...item }));
  });

  it("refuses escrows and items that do not pair, escrows of another agent, a call signature for several", () => {
    const signed = { kind: "call" as const, signature: new Uint8Array(64) };
    assert.throws(() => settleBatchInstructions({ ...base, escrows: [escrow(0n)], items: [], signed }), {
      name: "RangeError",
      message: "settle_batch takes one item per escrow: 1 escrows, 0 items",
    });
    const foreign = { ...escrow(0n), agent: PROGRAM_ID };
    assert.throws(() => settleBatchInstructions({ ...base, escrows: [foreign], items: [item], signed }), {
      name: "RangeError",
      message: `escrow 0 is of agent ${PROGRAM_ID.toBase58()}, not ${agent.toBase58()}`,
    });
    assert.throws(() => settleBatchInstructions({ ...base, escrows: [escrow(0n), escrow(1n)], items: [item, item], signed }), {
      name: "RangeError",
      message: "a call's own signature settles a batch of one, not 2",
    });
  });
});
