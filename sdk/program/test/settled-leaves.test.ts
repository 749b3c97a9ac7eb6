// A batch's one EscrowsSettledToLog expanded into a record per leaf.
import assert from "node:assert/strict";

import { Keypair } from "@solana/web3.js";

import {
  leavesOfBatch,
  settledLeaves,
  splitPayment,
  type AgentMarketEvent,
  type EventData,
  type ReceiptLeaf,
} from "../src/index.js";

const agent = Keypair.generate().publicKey;
const payer = Keypair.generate().publicKey;

function leaf(seed: number, amountUsdc: bigint): ReceiptLeaf {
  return {
    executionId: new Uint8Array(16).fill(seed),
    nonce: BigInt(seed),
    payer,
    payerTokenAccount: payer,
    apiKeyId: new Uint8Array(16).fill(seed + 1),
    amountUsdc,
    // A metered call that used all but 1% of what it held.
    chargedUsdc: amountUsdc - amountUsdc / 100n,
    returnedUsdc: amountUsdc / 100n,
    units: BigInt(seed * 10),
    requestHash: new Uint8Array(32).fill(seed + 2),
    resultHash: new Uint8Array(32).fill(seed + 3),
    settledAt: 1_700_000_000n,
  };
}

function batch(firstLeafIndex: bigint, leaves: ReceiptLeaf[]): EventData<"EscrowsSettledToLog"> {
  return { agent, firstLeafIndex, logRoot: new Uint8Array(32).fill(Number(firstLeafIndex)), checkpoint: firstLeafIndex === 0n, leaves };
}

describe("settled leaves", () => {
  it("leaf i of a batch is log leaf first_leaf_index + i, with the batch's agent, root and checkpoint flag and the split of its own charge", () => {
    const event = batch(7n, [leaf(1, 1_000_000n), leaf(2, 0n), leaf(3, 333n)]);
    const leaves = leavesOfBatch(event);
    assert.deepEqual(
      leaves.map((l) => l.leafIndex),
      [7n, 8n, 9n],
    );
    for (const [i, settled] of leaves.entries()) {
      const { agent: a, leafIndex: _, logRoot, checkpoint, creatorShareUsdc, feeUsdc, ...fields } = settled;
      assert.deepEqual(fields, event.leaves[i]);
      assert.ok(a.equals(agent));
      assert.equal(logRoot, event.logRoot);
      assert.equal(checkpoint, false);
      assert.deepEqual({ creatorShareUsdc, feeUsdc }, splitPayment(event.leaves[i]!.chargedUsdc));
    }
  });

  it("takes the leaves of every batch among the events, in order, and nothing else", () => {
    const first = batch(0n, [leaf(1, 10n)]);
    const second = batch(1n, [leaf(2, 20n), leaf(3, 30n)]);
    const other = { name: "AgentRetired", data: { agent } } as unknown as AgentMarketEvent;
    const events: AgentMarketEvent[] = [
      { name: "EscrowsSettledToLog", data: first },
      other,
      { name: "EscrowsSettledToLog", data: second },
    ];
    assert.deepEqual(
      settledLeaves(events).map((l) => [l.leafIndex, l.nonce]),
      [
        [0n, 1n],
        [1n, 2n],
        [2n, 3n],
      ],
    );
    assert.deepEqual(settledLeaves([other]), []);
    assert.deepEqual(leavesOfBatch(batch(4n, [])), []);
  });
});
