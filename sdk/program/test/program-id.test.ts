// The program at another address than the IDL's, as a deployment configures it per network:
// derivations, builders, account reads and event decoding all follow the id they are given, and
// none of them has a default (the IDL's address is passed as PROGRAM_ID by whoever means it).
import assert from "node:assert/strict";

import { utils } from "@coral-xyz/anchor";
import { Connection, Keypair, PublicKey, type AccountInfo } from "@solana/web3.js";

import {
  AGENT_SEED,
  coder,
  COLLATERAL_VAULT_SEED,
  DELEGATE_SEED,
  DISPUTE_SEED,
  ESCROW_SEED,
  ESCROW_VAULT_SEED,
  EVENT_AUTHORITY_SEED,
  EVENT_IX_TAG_LE,
  FEE_SHARD_COUNT,
  FEE_SHARD_SEED,
  IDL,
  MARKET_SEED,
  PROGRAM_ID,
  RECEIPT_LOG_SEED,
  SUBSCRIPTION_SEED,
  agentPda,
  collateralVaultPda,
  delegatePda,
  disputePda,
  escrowPda,
  escrowVaultPda,
  eventAuthorityPda,
  eventsFromInnerInstructions,
  eventsFromLogs,
  feeShardPda,
  fetchAgent,
  fetchMarket,
  fromHex,
  marketPda,
  receiptLogPda,
  subscriptionPda,
  programDataPda,
  BPF_LOADER_UPGRADEABLE_ID,
  type FetchOptions,
} from "../src/index.js";
import { buildGoldenCase, golden, GOLDEN_PROGRAM_ID, goldenInputs } from "./golden.js";
import { sampleRaw } from "./samples.js";

const OTHER = Keypair.generate().publicKey;
const payer = new PublicKey(golden.instructions.keys.payer);

/** web3.js's own derivation: the oracle the package's memoized one is checked against. */
const derive = (programId: PublicKey, ...seeds: Uint8Array[]) => PublicKey.findProgramAddressSync(seeds, programId)[0];

/** Every address a builder derives, under `programId`, with the golden inputs. */
function derivedAddresses(programId: PublicKey): Map<string, PublicKey> {
  const { agentId, executionId, leafIndex } = goldenInputs;
  const agent = derive(programId, AGENT_SEED, agentId);
  const leafIndexLe = new Uint8Array(8);
  new DataView(leafIndexLe.buffer).setBigUint64(0, leafIndex, true);
  const entries: [string, PublicKey][] = [
    ["program", programId],
    ["program_data", PublicKey.findProgramAddressSync([programId.toBytes()], BPF_LOADER_UPGRADEABLE_ID)[0]],
    ["market", derive(programId, MARKET_SEED)],
    ["delegate", derive(programId, DELEGATE_SEED)],
    ["event_authority", derive(programId, EVENT_AUTHORITY_SEED)],
    ["agent", agent],
    ["collateral_vault", derive(programId, COLLATERAL_VAULT_SEED, agent.toBytes())],
    ["escrow_vault", derive(programId, ESCROW_VAULT_SEED, agent.toBytes())],
    ["escrow", derive(programId, ESCROW_SEED, executionId)],
    ["dispute", derive(programId, DISPUTE_SEED, agent.toBytes(), leafIndexLe)],
    ["subscription", derive(programId, SUBSCRIPTION_SEED, agent.toBytes(), payer.toBytes())],
    ["receipt_log", derive(programId, RECEIPT_LOG_SEED, agent.toBytes())],
  ];
  // The other escrows a batch settles.
  for (const c of golden.instructions.cases.filter((c) => c.name === "settle_batch")) {
    for (const id of c.args.execution_ids as string[]) entries.push([`escrow/${id}`, derive(programId, ESCROW_SEED, fromHex(id))]);
  }
  // The escrows and subscriptions a batched open creates or reads, one per item.
  for (const c of golden.instructions.cases.filter((c) => c.name === "open_escrow_batch")) {
    for (const item of c.args.items as { execution_id: string; payer: string }[]) {
      entries.push([`escrow/${item.execution_id}`, derive(programId, ESCROW_SEED, fromHex(item.execution_id))]);
      entries.push([
        `subscription/${item.payer}`,
        derive(programId, SUBSCRIPTION_SEED, agent.toBytes(), new PublicKey(item.payer).toBytes()),
      ]);
    }
  }
  for (let index = 0; index < FEE_SHARD_COUNT; index++) {
    entries.push([`fee_shard/${index}`, derive(programId, FEE_SHARD_SEED, Uint8Array.of(index))]);
  }
  return new Map(entries);
}

describe("a program id other than the IDL's", () => {
  const ours = derivedAddresses(PROGRAM_ID);
  const theirs = derivedAddresses(OTHER);

  it("derives every PDA under the id given, the IDL's included", () => {
    const { agentId, executionId, leafIndex } = goldenInputs;
    const agent = theirs.get("agent")!;
    const pairs: [string, PublicKey, PublicKey][] = [
      ["program_data", programDataPda(OTHER), programDataPda(PROGRAM_ID)],
      ["market", marketPda(OTHER), marketPda(PROGRAM_ID)],
      ["delegate", delegatePda(OTHER), delegatePda(PROGRAM_ID)],
      ["event_authority", eventAuthorityPda(OTHER), eventAuthorityPda(PROGRAM_ID)],
      ["agent", agentPda(agentId, OTHER), agentPda(agentId, PROGRAM_ID)],
      ["collateral_vault", collateralVaultPda(agent, OTHER), collateralVaultPda(ours.get("agent")!, PROGRAM_ID)],
      ["escrow_vault", escrowVaultPda(agent, OTHER), escrowVaultPda(ours.get("agent")!, PROGRAM_ID)],
      ["escrow", escrowPda(executionId, OTHER), escrowPda(executionId, PROGRAM_ID)],
      ["dispute", disputePda(agent, leafIndex, OTHER), disputePda(ours.get("agent")!, leafIndex, PROGRAM_ID)],
      ["subscription", subscriptionPda(agent, payer, OTHER), subscriptionPda(ours.get("agent")!, payer, PROGRAM_ID)],
      ["receipt_log", receiptLogPda(agent, OTHER), receiptLogPda(ours.get("agent")!, PROGRAM_ID)],
      ...Array.from({ length: FEE_SHARD_COUNT }, (_, i): [string, PublicKey, PublicKey] => [
        `fee_shard/${i}`,
        feeShardPda(i, OTHER),
        feeShardPda(i, PROGRAM_ID),
      ]),
    ];
    for (const [name, other, default_] of pairs) {
      assert.equal(other.toBase58(), theirs.get(name)!.toBase58(), `${name} under the other id`);
      assert.equal(default_.toBase58(), ours.get(name)!.toBase58(), `${name} under the IDL's id`);
      assert.notEqual(other.toBase58(), default_.toBase58(), name);
    }
  });

  it("memoizes per program id: the same id parsed again derives the same, another id its own", () => {
    const again = new PublicKey(OTHER.toBase58());
    assert.equal(marketPda(again).toBase58(), theirs.get("market")!.toBase58());
    const third = Keypair.generate().publicKey;
    assert.equal(marketPda(third).toBase58(), derive(third, MARKET_SEED).toBase58());
    assert.equal(marketPda(PROGRAM_ID).toBase58(), ours.get("market")!.toBase58());
  });

  it("refuses a program id that is not a PublicKey (a caller passing a PDA function to map)", () => {
    assert.throws(() => feeShardPda(0, 1 as unknown as PublicKey), {
      name: "TypeError",
      message: "programId must be a PublicKey, got 1",
    });
  });

  it("refuses a program id left out by a caller the type checker does not see", () => {
    assert.throws(() => marketPda(undefined as unknown as PublicKey), {
      name: "TypeError",
      message: "programId must be a PublicKey, got undefined",
    });
  });

  for (const c of golden.instructions.cases) {
    it(`${c.name}: the instruction is the other program's, every derived account its twin, the data the same`, () => {
      const default_ = buildGoldenCase(c, GOLDEN_PROGRAM_ID);
      const other = buildGoldenCase(c, OTHER);
      assert.ok(other.programId.equals(OTHER));
      assert.deepEqual(Buffer.from(other.data), Buffer.from(default_.data));
      const twinOf = new Map([...ours].map(([name, address]) => [address.toBase58(), theirs.get(name)!]));
      const defaults = new Set([...ours.values()].map((a) => a.toBase58()));
      assert.equal(other.keys.length, default_.keys.length);
      default_.keys.forEach((meta, i) => {
        const expected = twinOf.get(meta.pubkey.toBase58()) ?? meta.pubkey;
        const got = other.keys[i]!;
        assert.equal(got.pubkey.toBase58(), expected.toBase58(), `account ${i}`);
        assert.equal(got.isSigner, meta.isSigner);
        assert.equal(got.isWritable, meta.isWritable);
        assert.ok(!defaults.has(got.pubkey.toBase58()), `account ${i} is still the IDL program's`);
      });
    });
  }

  describe("account reads", () => {
    const market = Buffer.concat([
      Buffer.from(IDL.accounts.find((a) => a.name === "Market")!.discriminator),
      coder.types.encode("Market", sampleRaw({ defined: { name: "Market" } }, 1)),
    ]);
    const info = (owner: PublicKey): AccountInfo<Buffer> => ({ data: market, owner, executable: false, lamports: 1, rentEpoch: 0 });

    /** A Connection answering from `accounts` only, recording the addresses asked for. */
    function connectionWith(accounts: Map<string, AccountInfo<Buffer>>, asked: string[]): Connection {
      return {
        getAccountInfo: async (address: PublicKey) => {
          asked.push(address.toBase58());
          return accounts.get(address.toBase58()) ?? null;
        },
      } as unknown as Connection;
    }

    it("fetchMarket reads the other program's market PDA and accepts its owner", async () => {
      const asked: string[] = [];
      const connection = connectionWith(new Map([[theirs.get("market")!.toBase58(), info(OTHER)]]), asked);
      const found = await fetchMarket(connection, undefined, { programId: OTHER, commitment: "confirmed" });
      assert.ok(found);
      assert.deepEqual(asked, [theirs.get("market")!.toBase58()]);
    });

    it("refuses an account of the IDL's program when reading for another, with both owners named", async () => {
      const address = theirs.get("agent")!;
      const connection = connectionWith(new Map([[address.toBase58(), info(PROGRAM_ID)]]), []);
      await assert.rejects(fetchAgent(connection, address, { programId: OTHER }), {
        message: `account ${address.toBase58()} is owned by ${PROGRAM_ID.toBase58()}, not the program ${OTHER.toBase58()}`,
      });
    });

    it("reads the IDL's program when given its id, and nothing without an id", async () => {
      const asked: string[] = [];
      const connection = connectionWith(new Map([[ours.get("market")!.toBase58(), info(PROGRAM_ID)]]), asked);
      assert.ok(await fetchMarket(connection, undefined, { programId: PROGRAM_ID, commitment: "confirmed" }));
      assert.deepEqual(asked, [ours.get("market")!.toBase58()]);
      const address = ours.get("agent")!;
      await assert.rejects(fetchAgent(connection, address, "confirmed" as unknown as FetchOptions), {
        name: "TypeError",
        message: "fetchAccount Agent: options.programId is required",
      });
      assert.deepEqual(asked, [ours.get("market")!.toBase58()], "nothing more was read");
    });
  });

  describe("events", () => {
    const raw = sampleRaw({ defined: { name: "FeesSwept" } }, 2);
    const discriminator = IDL.events.find((e) => e.name === "FeesSwept")!.discriminator;
    const eventBytes = Buffer.concat([Buffer.from(discriminator), coder.types.encode("FeesSwept", raw)]);

    /** A transaction in which program `programId` emitted the event through its event authority. */
    const emittedBy = (programId: PublicKey) => ({
      transaction: { message: { staticAccountKeys: [Keypair.generate().publicKey] } },
      meta: {
        err: null,
        innerInstructions: [
          {
            index: 0,
            instructions: [
              {
                programId,
                accounts: [derive(programId, EVENT_AUTHORITY_SEED)],
                data: utils.bytes.bs58.encode(Buffer.concat([Buffer.from(EVENT_IX_TAG_LE), eventBytes])),
              },
            ],
          },
        ],
      },
    });

    it("takes the other program's emit_cpi events and not the IDL program's, and the reverse", () => {
      assert.deepEqual(
        eventsFromInnerInstructions(emittedBy(OTHER), OTHER).map((e) => e.name),
        ["FeesSwept"],
      );
      assert.deepEqual(eventsFromInnerInstructions(emittedBy(PROGRAM_ID), OTHER), []);
      assert.deepEqual(eventsFromInnerInstructions(emittedBy(OTHER), PROGRAM_ID), []);
      assert.deepEqual(
        eventsFromInnerInstructions(emittedBy(PROGRAM_ID), PROGRAM_ID).map((e) => e.name),
        ["FeesSwept"],
      );
    });

    it("attributes logged events to the program id given", () => {
      const logs = (programId: PublicKey) => [
        `Program ${programId.toBase58()} invoke [1]`,
        `Program data: ${eventBytes.toString("base64")}`,
        `Program ${programId.toBase58()} success`,
      ];
      assert.deepEqual(
        eventsFromLogs(logs(OTHER), OTHER).map((e) => e.name),
        ["FeesSwept"],
      );
      assert.deepEqual(eventsFromLogs(logs(PROGRAM_ID), OTHER), []);
      assert.deepEqual(
        eventsFromLogs(logs(PROGRAM_ID), PROGRAM_ID).map((e) => e.name),
        ["FeesSwept"],
      );
    });
  });
});
