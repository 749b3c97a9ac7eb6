// The builders against the IDL and against anchor's own Program.methods…accountsStrict path.
import assert from "node:assert/strict";

import { Program, type BorshCoder, type Provider } from "@coral-xyz/anchor";
import { sha256 } from "@noble/hashes/sha2";
import { Connection, PublicKey, type TransactionInstruction } from "@solana/web3.js";

import {
  camelCase,
  ed25519VerifyInstruction,
  eventAuthorityPda,
  IDL,
  openEscrowInstruction,
  PROGRAM_ID,
  refundInstruction,
  registerAgentInstruction,
  settleBatchInstruction,
  topUpCollateralInstruction,
  type AgentTerms,
} from "../src/index.js";
import { buildGoldenCase, golden, GOLDEN_PROGRAM_ID, goldenInputs } from "./golden.js";

const instructions = new Map(IDL.instructions.map((ix) => [ix.name as string, ix]));

/**
 * The accounts after the ones the IDL lists, all writable: the escrows of a settle_batch, and the
 * escrow, token account and subscription of each item of an open_escrow_batch.
 */
function remainingAccounts(name: string, ix: TransactionInstruction) {
  const remaining = ix.keys.slice(instructions.get(name)!.accounts.length);
  for (const meta of remaining) assert.ok(["settle_batch", "open_escrow_batch"].includes(name) && meta.isWritable && !meta.isSigner, `${name}: extra account`);
  return remaining;
}
const built = golden.instructions.cases.map((c, i) => ({ name: c.name, label: `${c.name} (case ${i})`, ix: buildGoldenCase(c, GOLDEN_PROGRAM_ID) }));

describe("instruction builders", () => {
  it("cover every instruction of the IDL", () => {
    assert.deepEqual([...new Set(built.map((b) => b.name))].sort(), [...instructions.keys()].sort());
  });

  it("IDL discriminators are SHA-256(\"global:<name>\")[..8]", () => {
    for (const ix of IDL.instructions) {
      assert.deepEqual(ix.discriminator, Array.from(sha256(new TextEncoder().encode(`global:${ix.name}`)).subarray(0, 8)));
    }
  });

  for (const { name, label, ix } of built) {
    it(`${label}: program id, discriminator, account order and flags follow the IDL`, () => {
      const def = instructions.get(name)!;
      assert.ok(ix.programId.equals(PROGRAM_ID));
      assert.deepEqual(Array.from(ix.data.subarray(0, 8)), def.discriminator);
      // Only the batches take more, as remaining accounts after the IDL's.
      assert.equal(ix.keys.length - remainingAccounts(name, ix).length, def.accounts.length);
      def.accounts.forEach((account, i) => {
        const meta = ix.keys[i]!;
        const leftOut = "optional" in account && account.optional && meta.pubkey.equals(PROGRAM_ID);
        const what = `${name}.${account.name}`;
        assert.equal(meta.isSigner, leftOut ? false : Boolean("signer" in account && account.signer), `${what} signer`);
        assert.equal(meta.isWritable, leftOut ? false : Boolean("writable" in account && account.writable), `${what} writable`);
        if ("address" in account) assert.equal(meta.pubkey.toBase58(), account.address, what);
      });
      // #[event_cpi] adds the event authority and the program itself, last of the IDL's.
      assert.ok(ix.keys[def.accounts.length - 2]!.pubkey.equals(eventAuthorityPda(PROGRAM_ID)));
      assert.ok(ix.keys[def.accounts.length - 1]!.pubkey.equals(PROGRAM_ID));
    });
  }

  describe("equal what anchor's Program.methods builds", () => {
    const program = new Program(IDL, { connection: new Connection("http://127.0.0.1:8899") } as Provider);

    for (const { name, label, ix } of built) {
      it(label, async () => {
        const def = instructions.get(name)!;
        const decoded = (program.coder as BorshCoder).instruction.decode(Buffer.from(ix.data));
        assert.ok(decoded, "anchor decodes the data");
        assert.equal(decoded.name, camelCase(name));
        const args = def.args.map((arg) => (decoded.data as Record<string, unknown>)[camelCase(arg.name)]);
        const accounts: Record<string, PublicKey | null> = {};
        def.accounts.forEach((account, i) => {
          const pubkey = ix.keys[i]!.pubkey;
          const leftOut = "optional" in account && account.optional && pubkey.equals(PROGRAM_ID);
          accounts[camelCase(account.name)] = leftOut ? null : pubkey;
        });
        const methods = program.methods as unknown as Record<
          string,
          (...args: unknown[]) => {
            accountsStrict(a: unknown): {
              remainingAccounts(r: unknown): { instruction(): Promise<TransactionInstruction> };
            };
          }
        >;
        const theirs = await methods[camelCase(name)]!(...args)
          .accountsStrict(accounts)
          .remainingAccounts(remainingAccounts(name, ix))
          .instruction();
        assert.deepEqual(theirs.keys, ix.keys);
        assert.equal(theirs.data.toString("hex"), ix.data.toString("hex"));
        assert.ok(theirs.programId.equals(ix.programId));
      });
    }
  });

  describe("refuse bad input", () => {
    const { agent, executionId, escrow } = goldenInputs;
    const someone = new PublicKey(golden.instructions.keys.relayer);
    const terms: AgentTerms = {
      signingKey: new Uint8Array(32).fill(1),
      endpoint: "https://agent.example.com",
      listingHash: new Uint8Array(32),
      pricing: { kind: "PayPerUse", priceUsdc: 1n },
      maxExecutionSecs: 60,
    };
    const register = (over: Partial<Parameters<typeof registerAgentInstruction>[0]>) =>
      registerAgentInstruction({
        programId: PROGRAM_ID,
        creator: someone,
        agentId: new Uint8Array(16),
        creatorTokenAccount: someone,
        payoutAccount: someone,
        usdcMint: someone,
        terms,
        collateralUsdc: 1n,
        ...over,
      });

    it("ids and hashes of the wrong length", () => {
      assert.throws(() => register({ agentId: new Uint8Array(15) }), /agentId must be 16 bytes/);
      assert.throws(
        () =>
          openEscrowInstruction({
            programId: PROGRAM_ID,
            relayer: someone,
            usdcMint: someone,
            agent,
            payer: someone,
            payerTokenAccount: someone,
            executionId,
            apiKeyId: new Uint8Array(16),
            requestHash: new Uint8Array(31),
            maxAmountUsdc: 1n,
          }),
        /requestHash must be 32 bytes/,
      );
      assert.throws(() => register({ terms: { ...terms, signingKey: new Uint8Array(33) } }), /signingKey must be 32 bytes/);
    });

    it("amounts that are not u64 bigints", () => {
      const topUp = (amountUsdc: unknown) =>
        topUpCollateralInstruction({
          programId: PROGRAM_ID,
          creator: someone,
          agent,
          creatorTokenAccount: someone,
          usdcMint: someone,
          amountUsdc: amountUsdc as bigint,
        });
      assert.throws(() => topUp(1n << 64n), /out of range for u64/);
      assert.throws(() => topUp(-1n), /out of range for u64/);
      assert.throws(() => topUp(5), /must be a bigint/);
      assert.doesNotThrow(() => topUp((1n << 64n) - 1n));
    });

    it("small integers out of range", () => {
      assert.throws(
        () => register({ terms: { ...terms, maxExecutionSecs: 2 ** 32 } }),
        /out of range for u32/,
      );
      assert.throws(
        () =>
          settleBatchInstruction({
            programId: PROGRAM_ID,
            relayer: someone,
            usdcMint: someone,
            agent,
            payoutAccount: someone,
            executionIds: [escrow.executionId],
            items: [{ resultHash: new Uint8Array(32), units: 0n }],
            feeShardIndex: 8,
          }),
        /fee shard index 8/,
      );
    });

    it("unknown enum variants", () => {
      assert.throws(
        () =>
          refundInstruction({
            programId: PROGRAM_ID,
            relayer: someone,
            usdcMint: someone,
            escrow,
            reason: "Bored" as never,
            withSubscription: false,
          }),
        /Bored is not a variant of RefundReason/,
      );
      assert.throws(
        () => register({ terms: { ...terms, pricing: { kind: "Free" } as never } }),
        /Free is not a variant of Pricing/,
      );
    });

    it("Ed25519 inputs of the wrong length", () => {
      assert.throws(() => ed25519VerifyInstruction(new Uint8Array(31), new Uint8Array(64), new Uint8Array(32)), /signingKey/);
      assert.throws(() => ed25519VerifyInstruction(new Uint8Array(32), new Uint8Array(63), new Uint8Array(32)), /signature/);
      assert.throws(() => ed25519VerifyInstruction(new Uint8Array(32), new Uint8Array(64), new Uint8Array(33)), /digest/);
    });
  });
});
