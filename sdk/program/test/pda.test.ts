// findProgramAddress (src/curve.ts) against web3.js 1.x's findProgramAddressSync, on both sha256
// implementations; and the PDA memos: the addresses it derives, held in bounded maps.
// (test/golden.test.ts checks the addresses themselves against localnet's.)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";

import { Keypair, PublicKey } from "@solana/web3.js";

import { findProgramAddressWith, sha256Implementations, type Sha256 } from "../src/curve.js";
import { LruMap } from "../src/lru.js";
import {
  AGENT_SEED,
  agentPda,
  COLLATERAL_VAULT_SEED,
  collateralVaultPda,
  DELEGATE_SEED,
  delegatePda,
  DISPUTE_SEED,
  disputePda,
  ESCROW_SEED,
  ESCROW_VAULT_SEED,
  escrowPda,
  escrowVaultPda,
  EVENT_AUTHORITY_SEED,
  eventAuthorityPda,
  FEE_SHARD_COUNT,
  FEE_SHARD_SEED,
  feeShardPda,
  findProgramAddress,
  MARKET_SEED,
  marketPda,
  pdaMemoSizes,
  PROGRAM_ID,
  SUBSCRIPTION_SEED,
  subscriptionPda,
} from "../src/index.js";

const derive = (...seeds: Uint8Array[]) => PublicKey.findProgramAddressSync(seeds, PROGRAM_ID)[0];

/** 1 to 4 seeds of 0 to 32 random bytes. */
function randomSeeds(): Uint8Array[] {
  return Array.from({ length: randomInt(1, 5) }, () => randomBytes(randomInt(0, 33)));
}

/** Both derivations' results, or both errors, side by side. */
function outcomes(
  ours: () => [PublicKey, number],
  seeds: Uint8Array[],
  programId: PublicKey,
): { ours: [string, number] | Error; web3: [string, number] | Error } {
  const settle = (derive: () => [PublicKey, number]): [string, number] | Error => {
    try {
      const [address, bump] = derive();
      return [address.toBase58(), bump];
    } catch (error) {
      return error as Error;
    }
  };
  return { ours: settle(ours), web3: settle(() => PublicKey.findProgramAddressSync(seeds, programId)) };
}

function assertSameDerivation(sha256: Sha256 | undefined, seeds: Uint8Array[], programId: PublicKey): [string, number] {
  const derive = () => (sha256 ? findProgramAddressWith(sha256, seeds, programId) : findProgramAddress(seeds, programId));
  const { ours, web3 } = outcomes(derive, seeds, programId);
  assert.deepEqual(ours, web3, seeds.map((seed) => Buffer.from(seed).toString("hex")).join("/"));
  assert.ok(!(ours instanceof Error));
  return ours;
}

describe("findProgramAddress (src/curve.ts)", () => {
  it("hashes with node:crypto here", () => {
    assert.ok(sha256Implementations.node, "node:crypto loads through process.getBuiltinModule");
  });

  it("derives web3.js's address and bump for 3,000 random seed sets, under this program and others", () => {
    const bumps = new Set<number>();
    for (let i = 0; i < 3_000; i++) {
      const programId = i % 2 === 0 ? PROGRAM_ID : Keypair.generate().publicKey;
      bumps.add(assertSameDerivation(undefined, randomSeeds(), programId)[1]);
    }
    // Half the candidates are on the curve: bump 255 about half the time, 254 a quarter, …
    assert.ok(bumps.has(255) && bumps.has(254) && bumps.has(253), [...bumps].join(", "));
  });

  it("derives web3.js's address and bump for every PDA of the program, as the PDA functions return", () => {
    const agent = Keypair.generate().publicKey;
    const payer = Keypair.generate().publicKey;
    const id = randomBytes(16);
    const feeShards = Array.from({ length: FEE_SHARD_COUNT }, (_, index): [PublicKey, Uint8Array[]] => [
      feeShardPda(index, PROGRAM_ID),
      [FEE_SHARD_SEED, Uint8Array.of(index)],
    ]);
    const cases: [PublicKey, Uint8Array[]][] = [
      [marketPda(PROGRAM_ID), [MARKET_SEED]],
      [delegatePda(PROGRAM_ID), [DELEGATE_SEED]],
      [eventAuthorityPda(PROGRAM_ID), [EVENT_AUTHORITY_SEED]],
      ...feeShards,
      [agentPda(id, PROGRAM_ID), [AGENT_SEED, id]],
      [collateralVaultPda(agent, PROGRAM_ID), [COLLATERAL_VAULT_SEED, agent.toBytes()]],
      [escrowVaultPda(agent, PROGRAM_ID), [ESCROW_VAULT_SEED, agent.toBytes()]],
      [subscriptionPda(agent, payer, PROGRAM_ID), [SUBSCRIPTION_SEED, agent.toBytes(), payer.toBytes()]],
      [escrowPda(id, PROGRAM_ID), [ESCROW_SEED, id]],
      [disputePda(agent, 5n, PROGRAM_ID), [DISPUTE_SEED, agent.toBytes(), Uint8Array.of(5, 0, 0, 0, 0, 0, 0, 0)]],
      [disputePda(agent, (1n << 64n) - 1n, PROGRAM_ID), [DISPUTE_SEED, agent.toBytes(), new Uint8Array(8).fill(255)]],
    ];
    for (const [address, seeds] of cases) {
      assert.equal(assertSameDerivation(undefined, seeds, PROGRAM_ID)[0], address.toBase58());
    }
  });

  it("refuses a seed over 32 bytes with web3.js's TypeError, wherever it is", () => {
    const ok = randomBytes(32);
    const seedSets = [[randomBytes(33)], [ok, randomBytes(33)], [randomBytes(33), ok], [ok, ok, randomBytes(64)]];
    for (const seeds of seedSets) {
      const { ours, web3 } = outcomes(() => findProgramAddress(seeds, PROGRAM_ID), seeds, PROGRAM_ID);
      assert.ok(ours instanceof TypeError && web3 instanceof TypeError);
      assert.equal(ours.message, "Max seed length exceeded");
      assert.equal(ours.message, web3.message);
    }
  });

  // The runtime refuses more than 16 seeds (the bump included); web3.js 1.x does not check.
  it("takes no seeds, and more than 16, as web3.js does", () => {
    assertSameDerivation(undefined, [], PROGRAM_ID);
    assertSameDerivation(undefined, Array.from({ length: 17 }, () => randomBytes(32)), PROGRAM_ID);
  });

  it("tries bumps 255 down to 1, then gives up with web3.js's message", () => {
    const onCurve = Keypair.generate().publicKey.toBytes();
    const tried: number[] = [];
    const seeds = [randomBytes(7), randomBytes(3)];
    const alwaysOnCurve: Sha256 = (message) => {
      assert.equal(message.length, 10 + 1 + 32 + "ProgramDerivedAddress".length);
      tried.push(message[10]!);
      return onCurve;
    };
    assert.throws(() => findProgramAddressWith(alwaysOnCurve, seeds, PROGRAM_ID), {
      name: "Error",
      message: "Unable to find a viable program address nonce",
    });
    assert.deepEqual(tried, Array.from({ length: 255 }, (_, i) => 255 - i));
  });

  it("derives the same with noble-hashes' sha256, the fallback where node:crypto cannot load", () => {
    for (let i = 0; i < 500; i++) assertSameDerivation(sha256Implementations.noble, randomSeeds(), PROGRAM_ID);
  });

  it("falls back to noble-hashes where process.getBuiltinModule is missing (browsers, Node before 20.16)", function () {
    this.timeout(60_000);
    const seeds = [randomBytes(16), randomBytes(32)];
    const script = `
      delete process.getBuiltinModule;
      const { PublicKey } = await import("@solana/web3.js");
      const m = await import(${JSON.stringify(new URL("../src/curve.ts", import.meta.url).href)});
      const seeds = ${JSON.stringify(seeds.map((seed) => seed.toString("hex")))}.map((hex) => Buffer.from(hex, "hex"));
      const [address, bump] = m.findProgramAddress(seeds, new PublicKey(${JSON.stringify(PROGRAM_ID.toBase58())}));
      const node = m.sha256Implementations.node !== undefined;
      console.log(JSON.stringify({ node, address: address.toBase58(), bump }));`;
    const output = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    const [address, bump] = PublicKey.findProgramAddressSync(seeds, PROGRAM_ID);
    assert.deepEqual(JSON.parse(output), { node: false, address: address.toBase58(), bump });
  });

  it("has two sha256 implementations that agree, and are sha256", () => {
    const { node, noble } = sha256Implementations;
    const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    for (const sha256 of [node!, noble]) assert.equal(Buffer.from(sha256(Buffer.from("abc"))).toString("hex"), abc);
    for (let i = 0; i < 200; i++) {
      const message = randomBytes(randomInt(0, 600));
      assert.deepEqual(new Uint8Array(node!(message)), noble(message));
    }
  });
});

describe("PDA memos", () => {
  it("return the derived addresses, the same object for the same seeds however they are passed", () => {
    const agent = Keypair.generate().publicKey;
    const payer = Keypair.generate().publicKey;
    const agentId = randomBytes(16);
    const executionId = randomBytes(16);
    const cases: [string, (a: PublicKey, p: PublicKey, agentId: Uint8Array, executionId: Uint8Array) => PublicKey, PublicKey][] = [
      ["agent", (_a, _p, id) => agentPda(id, PROGRAM_ID), derive(AGENT_SEED, agentId)],
      ["collateral vault", (a) => collateralVaultPda(a, PROGRAM_ID), derive(COLLATERAL_VAULT_SEED, agent.toBytes())],
      ["escrow vault", (a) => escrowVaultPda(a, PROGRAM_ID), derive(ESCROW_VAULT_SEED, agent.toBytes())],
      ["subscription", (a, p) => subscriptionPda(a, p, PROGRAM_ID), derive(SUBSCRIPTION_SEED, agent.toBytes(), payer.toBytes())],
      ["escrow", (_a, _p, _id, e) => escrowPda(e, PROGRAM_ID), derive(ESCROW_SEED, executionId)],
      ["dispute", (a) => disputePda(a, 7n, PROGRAM_ID), derive(DISPUTE_SEED, agent.toBytes(), Uint8Array.of(7, 0, 0, 0, 0, 0, 0, 0))],
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
    assert.ok(!escrowVaultPda(a, PROGRAM_ID).equals(collateralVaultPda(a, PROGRAM_ID)));
    assert.ok(!subscriptionPda(a, b, PROGRAM_ID).equals(subscriptionPda(b, a, PROGRAM_ID)));
    assert.ok(subscriptionPda(b, a, PROGRAM_ID).equals(derive(SUBSCRIPTION_SEED, b.toBytes(), a.toBytes())));
  });

  it("hold at most their capacity, dropping the least recently used derivation", () => {
    const { executions, accounts } = pdaMemoSizes();
    assert.equal(accounts.capacity, 10_000);
    const ids = Array.from({ length: executions.capacity + 10 }, () => randomBytes(16));
    const first = escrowPda(ids[0]!, PROGRAM_ID);
    const kept = escrowPda(ids[1]!, PROGRAM_ID);
    for (const id of ids.slice(2)) {
      escrowPda(id, PROGRAM_ID);
      // Used all along, so never the least recent.
      assert.equal(escrowPda(ids[1]!, PROGRAM_ID), kept);
    }
    assert.equal(pdaMemoSizes().executions.size, executions.capacity);
    const rederived = escrowPda(ids[0]!, PROGRAM_ID);
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
