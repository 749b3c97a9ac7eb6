// The size of a settle_batch transaction (docs/program.md, "Batch limits"): a legacy transaction
// carries 8 fixed-price escrows under one batch signature, a v0 one loading the agent's fixed
// accounts from its lookup table 12 (SETTLE_BATCH_SIZE, of the 16 the program takes); escrows
// with units (8 bytes more each, none sent when every count is 0) 7 and 11; a lone call under its
// own signature fits either way. A batch is cut into as few transactions as hold it.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import {
  agentTableAddresses,
  compileMessage,
  fitsTransaction,
  MAX_SETTLE_BATCH,
  PACKET_DATA_SIZE,
  serializeTransaction,
  settleBatchInstructions,
  type BatchSignature,
  type LookupTable,
} from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { SETTLE_BATCH_SIZE } from "../src/executions/settle-batches.js";
import { fittingChunks } from "../src/executions/transactions.js";

const relayer = Keypair.generate().publicKey;
const programId = Keypair.generate().publicKey;
const agent = Keypair.generate().publicKey;
const usdcMint = Keypair.generate().publicKey;
const payoutAccount = Keypair.generate().publicKey;
const table: LookupTable = { key: Keypair.generate().publicKey, addresses: agentTableAddresses({ programId, agent, usdcMint, payoutAccount }) };

function settleBatch(escrows: number, kind: BatchSignature["kind"] = "batch", units = 0n) {
  return settleBatchInstructions({
    programId,
    relayer,
    usdcMint,
    agent,
    payoutAccount,
    escrows: Array.from({ length: escrows }, (_, i) => ({
      executionId: randomBytes(16),
      agent,
      nonce: BigInt(i),
      payer: Keypair.generate().publicKey,
      payerTokenAccount: Keypair.generate().publicKey,
      amountUsdc: 250_000n,
      requestHash: randomBytes(32),
    })),
    items: Array.from({ length: escrows }, () => ({ resultHash: randomBytes(32), units })),
    feeShardIndex: 7,
    signingKey: randomBytes(32),
    signed: { kind, signature: randomBytes(64) },
  });
}

function transaction(escrows: number, tables: LookupTable[] = [], kind: BatchSignature["kind"] = "batch"): Uint8Array {
  const message = compileMessage(relayer, settleBatch(escrows, kind), Keypair.generate().publicKey.toBase58(), tables);
  return serializeTransaction([new Uint8Array(64)], message);
}

describe("settle batches", () => {
  it("takes as many escrows into a batch as a v0 transaction with the agent's table holds, which the program settles", () => {
    assert.ok(transaction(SETTLE_BATCH_SIZE, [table]).length <= PACKET_DATA_SIZE);
    assert.equal(fitsTransaction(relayer, settleBatch(SETTLE_BATCH_SIZE + 1), [table]), false);
    assert.ok(SETTLE_BATCH_SIZE <= MAX_SETTLE_BATCH);
  });

  it("fits 8 escrows under one batch signature in a legacy transaction, not 9", () => {
    assert.ok(transaction(8).length <= PACKET_DATA_SIZE);
    assert.throws(() => transaction(9), /more than the 1232 a packet carries/);
  });

  it("fits 12 in a v0 transaction loading the agent's fixed accounts from its table, not 13", () => {
    const bytes = transaction(12, [table]);
    assert.ok(bytes.length <= PACKET_DATA_SIZE, `${bytes.length} bytes`);
    assert.equal(fitsTransaction(relayer, settleBatch(13), [table]), false);
    // What the table holds that the instructions name is loaded, the escrows stay static.
    assert.ok(transaction(8, [table]).length < transaction(8).length - 250);
  });

  it("fits 7 and 11 escrows with units (a metered call's, 8 bytes more each), not 8 and 12", () => {
    assert.equal(fitsTransaction(relayer, settleBatch(7, "batch", 5n)), true);
    assert.equal(fitsTransaction(relayer, settleBatch(8, "batch", 5n)), false);
    assert.equal(fitsTransaction(relayer, settleBatch(11, "batch", 5n), [table]), true);
    assert.equal(fitsTransaction(relayer, settleBatch(12, "batch", 5n), [table]), false);
  });

  it("fits a lone call under its own signature, and takes a call's signature for one escrow only", () => {
    assert.ok(transaction(1, [], "call").length <= PACKET_DATA_SIZE);
    assert.ok(transaction(1, [table], "call").length <= PACKET_DATA_SIZE);
    assert.throws(() => transaction(2, [], "call"), /a call's own signature settles a batch of one, not 2/);
  });

  it("the table holds no signer and no invoked program, so everything it holds can be loaded", () => {
    const names = table.addresses.map((address) => address.toBase58());
    assert.ok(!names.includes(relayer.toBase58()));
    assert.ok(!names.includes(programId.toBase58()));
    assert.ok(!names.includes(new PublicKey("Ed25519SigVerify111111111111111111111111111").toBase58()));
    assert.equal(new Set(names).size, names.length, "each address once");
  });

  it("cuts a batch into as few transactions as hold it: 16 as 8 + 8 legacy, 12 + 4 with the table", async () => {
    const items = Array.from({ length: MAX_SETTLE_BATCH }, (_, i) => i);
    const sizing = (chunk: number[]) => settleBatch(chunk.length, chunk.length > 1 ? "batch" : "call");
    const lengths = async (tables: LookupTable[]) => (await fittingChunks(items, relayer, sizing, tables)).map((chunk) => chunk.length);
    assert.deepEqual(await lengths([]), [8, 8]);
    assert.deepEqual(await lengths([table]), [12, 4]);
    assert.deepEqual((await fittingChunks(items.slice(0, 5), relayer, sizing)).map((chunk) => chunk.length), [5], "what fits goes whole");
    const chunks = await fittingChunks(items, relayer, sizing, [table]);
    assert.deepEqual(chunks.flat(), items, "every item once, in order");
  });
});
