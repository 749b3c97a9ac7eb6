// The size of a settle_batch transaction: SETTLE_BATCH_SIZE escrows under one batch signature are
// as many as one legacy transaction carries (docs/program.md, "Batch limits"), and one more would
// not fit; a lone call under its own signature fits too.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import {
  compileLegacyMessage,
  PACKET_DATA_SIZE,
  serializeLegacyTransaction,
  settleBatchInstructions,
  type BatchSignature,
} from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { SETTLE_BATCH_SIZE } from "../src/executions/settle-batches.js";

function settleBatchTransaction(escrows: number, kind: BatchSignature["kind"] = "batch"): Uint8Array {
  const relayer = Keypair.generate().publicKey;
  const programId = Keypair.generate().publicKey;
  const instructions = settleBatchInstructions({
    programId,
    relayer,
    usdcMint: Keypair.generate().publicKey,
    agent: Keypair.generate().publicKey,
    payoutAccount: Keypair.generate().publicKey,
    executionIds: Array.from({ length: escrows }, () => randomBytes(16)),
    resultHashes: Array.from({ length: escrows }, () => randomBytes(32)),
    requestHashes: Array.from({ length: escrows }, () => randomBytes(32)),
    feeShardIndex: 7,
    signingKey: randomBytes(32),
    signed: { kind, signature: randomBytes(64) },
  });
  const message = compileLegacyMessage(relayer, instructions, Keypair.generate().publicKey.toBase58());
  return serializeLegacyTransaction([new Uint8Array(64)], message);
}

describe("settle batches", () => {
  it(`fits ${SETTLE_BATCH_SIZE} escrows under one batch signature in one transaction`, () => {
    assert.ok(settleBatchTransaction(SETTLE_BATCH_SIZE).length <= PACKET_DATA_SIZE);
  });

  it("could not fit one more", () => {
    assert.throws(() => settleBatchTransaction(SETTLE_BATCH_SIZE + 1), /more than the 1232 a packet carries/);
  });

  it("fits a lone call under its own signature, and takes a call's signature for one escrow only", () => {
    assert.ok(settleBatchTransaction(1, "call").length <= PACKET_DATA_SIZE);
    assert.throws(() => settleBatchTransaction(2, "call"), /a call's own signature settles a batch of one, not 2/);
  });
});
