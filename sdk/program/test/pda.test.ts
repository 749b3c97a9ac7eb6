// The PDA memos: the addresses findProgramAddressSync derives, held in bounded maps.
// (test/golden.test.ts checks the addresses themselves against localnet's.)
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { Keypair, PublicKey } from "@solana/web3.js";

import { LruMap } from "../src/lru.js";
import {
  AGENT_SEED,
  agentPda,
  COLLATERAL_VAULT_SEED,
  collateralVaultPda,
  DISPUTE_SEED,
  disputePda,
  ESCROW_SEED,
  ESCROW_VAULT_SEED,
  escrowPda,
  escrowVaultPda,
  pdaMemoSizes,
  PROGRAM_ID,
  RECEIPT_SEED,
  receiptPda,
  SUBSCRIPTION_SEED,
  subscriptionPda,
} from "../src/index.js";

const derive = (...seeds: Uint8Array[]) => PublicKey.findProgramAddressSync(seeds, PROGRAM_ID)[0];

describe("PDA memos", () => {
  it("return the derived addresses, the same object for the same seeds however they are passed", () => {
    const agent = Keypair.generate().publicKey;
    const payer = Keypair.generate().publicKey;
    const agentId = randomBytes(16);
    const executionId = randomBytes(16);
    const cases: [string, (a: PublicKey, p: PublicKey, agentId: Uint8Array, executionId: Uint8Array) => PublicKey, PublicKey][] = [
      ["agent", (_a, _p, id) => agentPda(id), derive(AGENT_SEED, agentId)],
      ["collateral vault", (a) => collateralVaultPda(a), derive(COLLATERAL_VAULT_SEED, agent.toBytes())],
      ["escrow vault", (a) => escrowVaultPda(a), derive(ESCROW_VAULT_SEED, agent.toBytes())],
      ["subscription", (a, p) => subscriptionPda(a, p), derive(SUBSCRIPTION_SEED, agent.toBytes(), payer.toBytes())],
      ["escrow", (_a, _p, _id, e) => escrowPda(e), derive(ESCROW_SEED, executionId)],
      ["receipt", (_a, _p, _id, e) => receiptPda(e), derive(RECEIPT_SEED, executionId)],
      ["dispute", (_a, _p, _id, e) => disputePda(e), derive(DISPUTE_SEED, executionId)],
    ];
    for (const [name, pda, expected] of cases) {
      const first = pda(agent, payer, agentId, executionId);
      assert.ok(first.equals(expected), name);
      // Equal keys in other objects, as a caller parsing them again from a row would pass them.
      const again = pda(
        new PublicKey(agent.toBase58()),
        new PublicKey(payer.toBytes()),
        Uint8Array.from(agentId),
        Uint8Array.from(executionId),
      );
      assert.equal(again, first, name);
    }
  });

  it("tell seeds apart: an agent's escrow vault is not its collateral vault, a subscription depends on both keys", () => {
    const [a, b] = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    assert.ok(!escrowVaultPda(a).equals(collateralVaultPda(a)));
    assert.ok(!subscriptionPda(a, b).equals(subscriptionPda(b, a)));
    assert.ok(subscriptionPda(b, a).equals(derive(SUBSCRIPTION_SEED, b.toBytes(), a.toBytes())));
  });

  it("hold at most their capacity, dropping the least recently used derivation", () => {
    const { executions, accounts } = pdaMemoSizes();
    assert.equal(accounts.capacity, 10_000);
    const ids = Array.from({ length: executions.capacity + 10 }, () => randomBytes(16));
    const first = escrowPda(ids[0]!);
    const kept = escrowPda(ids[1]!);
    for (const id of ids.slice(2)) {
      escrowPda(id);
      // Used all along, so never the least recent.
      assert.equal(escrowPda(ids[1]!), kept);
    }
    assert.equal(pdaMemoSizes().executions.size, executions.capacity);
    const rederived = escrowPda(ids[0]!);
    assert.notEqual(rederived, first, "dropped, then derived again");
    assert.ok(rederived.equals(first));
    assert.equal(pdaMemoSizes().executions.size, executions.capacity);
  });
});

describe("LruMap", () => {
  it("drops the least recently used entry beyond its capacity", () => {
    const map = new LruMap<string, number>(3);
    map.set("a", 1);
    map.set("b", 2);
    map.set("c", 3);
    assert.equal(map.get("a"), 1);
    map.set("d", 4);
    assert.equal(map.size, 3);
    assert.equal(map.get("b"), undefined);
    assert.deepEqual([map.get("a"), map.get("c"), map.get("d")], [1, 3, 4]);
    map.set("c", 30);
    assert.equal(map.size, 3);
    assert.equal(map.get("c"), 30);
  });

  it("getOrSet computes only on a miss", () => {
    const map = new LruMap<string, number>(2);
    let calls = 0;
    const make = () => ++calls;
    assert.equal(map.getOrSet("a", make), 1);
    assert.equal(map.getOrSet("a", make), 1);
    assert.equal(calls, 1);
  });

  it("refuses a capacity that is not a positive integer", () => {
    assert.throws(() => new LruMap(0), RangeError);
    assert.throws(() => new LruMap(1.5), RangeError);
  });
});
