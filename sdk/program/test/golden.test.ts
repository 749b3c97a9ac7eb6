// Every golden vector of tests/vectors/golden.json, which localnet/tests/vectors.rs checks
// against the Rust implementation.
import assert from "node:assert/strict";
import { createPrivateKey, createPublicKey, sign, verify } from "node:crypto";

import { sha256 } from "@noble/hashes/sha2";
import { Ed25519Program, Keypair, PublicKey } from "@solana/web3.js";

import {
  agentPda,
  canonicalJson,
  collateralVaultPda,
  delegatePda,
  disputePda,
  ed25519VerifyInstruction,
  escrowPda,
  escrowVaultPda,
  eventAuthorityPda,
  FEE_SHARD_COUNT,
  feeShardPda,
  fromHex,
  marketPda,
  outputHash,
  PROGRAM_ID,
  requestHash,
  resultDigest,
  settleBatchInstruction,
  settleBatchInstructions,
  signingKeyProofDigest,
  signingKeyProofInstruction,
  subscriptionPda,
  toHex,
} from "../src/index.js";
import { buildGoldenCase, golden, GOLDEN_PROGRAM_ID } from "./golden.js";


/** Ed25519 private key from a 32-byte seed, for node:crypto (PKCS#8 DER prefix + seed). */
function ed25519PrivateKey(seed: Uint8Array) {
  const prefix = Buffer.from("302e020100300506032b657004220420", "hex");
  return createPrivateKey({ key: Buffer.concat([prefix, seed]), format: "der", type: "pkcs8" });
}

describe("golden vectors (tests/vectors/golden.json)", () => {
  it("names the IDL's program id", () => {
    assert.equal(golden.program_id, PROGRAM_ID.toBase58());
  });

  describe("result digest", () => {
    for (const [i, c] of golden.result_digest.entries()) {
      it(`case ${i}: ${c.digest.slice(0, 16)}…`, () => {
        const digest = resultDigest({
          escrow: {
            executionId: fromHex(c.execution_id),
            agent: new PublicKey(c.agent),
            nonce: BigInt(c.nonce),
            payer: new PublicKey(c.payer),
            payerTokenAccount: new PublicKey(c.payer_token_account),
            amountUsdc: BigInt(c.amount_usdc),
            requestHash: fromHex(c.request_hash),
          },
          resultHash: fromHex(c.result_hash),
          units: BigInt(c.units),
        });
        assert.equal(toHex(digest), c.digest);
      });
    }
  });

  describe("signing-key proof", () => {
    const key = ed25519PrivateKey(fromHex(golden.ed25519.seed));
    for (const [i, c] of golden.signing_key_proof.entries()) {
      it(`case ${i}: digest, signature and precompile instruction`, () => {
        const agent = new PublicKey(c.agent);
        const creator = new PublicKey(c.creator);
        assert.equal(toHex(signingKeyProofDigest(agent, creator)), c.digest);
        assert.equal(toHex(sign(null, fromHex(c.digest), key)), c.signature);
        const ix = signingKeyProofInstruction({
          agent,
          creator,
          signingKey: fromHex(golden.ed25519.public_key),
          signingKeyProof: fromHex(c.signature),
        });
        assert.equal(toHex(ix.data), c.instruction_data);
      });
    }
  });

  describe("canonical JSON (RFC 8785) and its SHA-256", () => {
    for (const c of golden.canonical_json) {
      it(c.name, () => {
        const value: unknown = JSON.parse(c.input);
        assert.equal(canonicalJson(value), c.canonical);
        assert.equal(toHex(sha256(new TextEncoder().encode(c.canonical))), c.sha256);
        assert.equal(toHex(outputHash(value)), c.sha256);
      });
    }
  });

  describe("request hash", () => {
    for (const c of golden.request_hash) {
      it(c.name, () => {
        const task: unknown = JSON.parse(c.task);
        const parameters: unknown = JSON.parse(c.parameters);
        assert.equal(canonicalJson({ task, parameters }), c.canonical);
        assert.equal(toHex(requestHash(task, parameters)), c.request_hash);
      });
    }
  });

  describe("Ed25519", () => {
    const ed = golden.ed25519;
    const seed = fromHex(ed.seed);

    it("derives the public key from the seed (RFC 8032 test 1)", () => {
      const keypair = Keypair.fromSeed(seed);
      assert.equal(toHex(keypair.publicKey.toBytes()), ed.public_key);
      assert.equal(keypair.publicKey.toBase58(), ed.public_key_base58);
    });

    it("signs deterministically: the empty message (RFC 8032 test 1) and the result digest", () => {
      const key = ed25519PrivateKey(seed);
      assert.equal(toHex(sign(null, Buffer.alloc(0), key)), ed.empty_message_signature);
      assert.equal(ed.message, golden.result_digest[0]!.digest);
      assert.equal(toHex(sign(null, fromHex(ed.message), key)), ed.signature);
      assert.ok(verify(null, fromHex(ed.message), createPublicKey(key), fromHex(ed.signature)));
    });

    it("builds the precompile instruction byte for byte", () => {
      const ix = ed25519VerifyInstruction(fromHex(ed.public_key), fromHex(ed.signature), fromHex(ed.message));
      assert.equal(ix.programId.toBase58(), "Ed25519SigVerify111111111111111111111111111");
      assert.deepEqual(ix.keys, []);
      assert.equal(toHex(ix.data), ed.instruction_data);
      const web3 = Ed25519Program.createInstructionWithPublicKey({
        publicKey: fromHex(ed.public_key),
        message: fromHex(ed.message),
        signature: fromHex(ed.signature),
      });
      assert.equal(toHex(web3.data), ed.instruction_data);
    });
  });

  describe("PDAs", () => {
    const p = golden.pdas;
    it("market, delegate, event authority", () => {
      assert.equal(marketPda(PROGRAM_ID).toBase58(), p.market);
      assert.equal(delegatePda(PROGRAM_ID).toBase58(), p.delegate);
      assert.equal(eventAuthorityPda(PROGRAM_ID).toBase58(), p.event_authority);
    });
    it(`fee shards 0..${FEE_SHARD_COUNT - 1}`, () => {
      assert.equal(p.fee_shards.length, FEE_SHARD_COUNT);
      assert.deepEqual(
        p.fee_shards.map((_, i) => feeShardPda(i, PROGRAM_ID).toBase58()),
        p.fee_shards,
      );
    });
    it("agents and their vaults", () => {
      for (const c of p.agents) {
        const agent = agentPda(fromHex(c.agent_id), PROGRAM_ID);
        assert.equal(agent.toBase58(), c.agent);
        assert.equal(collateralVaultPda(agent, PROGRAM_ID).toBase58(), c.collateral_vault);
        assert.equal(escrowVaultPda(agent, PROGRAM_ID).toBase58(), c.escrow_vault);
      }
    });
    it("escrows", () => {
      for (const c of p.executions) assert.equal(escrowPda(fromHex(c.execution_id), PROGRAM_ID).toBase58(), c.escrow);
    });
    it("disputes, by agent and leaf index", () => {
      for (const c of p.disputes) {
        assert.equal(disputePda(new PublicKey(c.agent), BigInt(c.leaf_index), PROGRAM_ID).toBase58(), c.dispute);
      }
    });
    it("subscriptions", () => {
      for (const c of p.subscriptions) {
        assert.equal(subscriptionPda(new PublicKey(c.agent), new PublicKey(c.payer), PROGRAM_ID).toBase58(), c.subscription);
      }
    });
  });

  describe("instruction builders equal localnet/src/market.rs's", () => {
    const inputs = golden.instructions;
    const key = (name: keyof typeof inputs.keys) => new PublicKey(inputs.keys[name]);

    for (const [i, c] of inputs.cases.entries()) {
      it(`case ${i}: ${c.name} ${JSON.stringify(c.args).slice(0, 60)}`, () => {
        const ix = buildGoldenCase(c, GOLDEN_PROGRAM_ID);
        assert.equal(ix.programId.toBase58(), c.program_id);
        assert.deepEqual(
          ix.keys.map((k) => ({ pubkey: k.pubkey.toBase58(), is_signer: k.isSigner, is_writable: k.isWritable })),
          c.accounts,
        );
        assert.equal(toHex(ix.data), c.data);
      });
    }

    it("settleBatchInstructions of one is [Ed25519 verification of the result digest, settle_batch]", () => {
      const ed = golden.ed25519;
      const c = golden.result_digest[0]!;
      const escrowBinding = {
        executionId: fromHex(c.execution_id),
        agent: new PublicKey(c.agent),
        nonce: BigInt(c.nonce),
        payer: new PublicKey(c.payer),
        payerTokenAccount: new PublicKey(c.payer_token_account),
        amountUsdc: BigInt(c.amount_usdc),
        requestHash: fromHex(c.request_hash),
      };
      const items = [{ resultHash: fromHex(c.result_hash), units: BigInt(c.units) }];
      const input = {
        programId: GOLDEN_PROGRAM_ID,
        relayer: key("relayer"),
        usdcMint: key("usdc_mint"),
        agent: escrowBinding.agent,
        payoutAccount: key("payout_account"),
        items,
        feeShardIndex: 5,
      };
      const [verifyIx, settleIx] = settleBatchInstructions({
        ...input,
        escrows: [escrowBinding],
        signingKey: fromHex(ed.public_key),
        signed: { kind: "call", signature: fromHex(ed.signature) },
      });
      assert.equal(toHex(resultDigest({ escrow: escrowBinding, ...items[0]! })), ed.message);
      assert.deepEqual(verifyIx, ed25519VerifyInstruction(fromHex(ed.public_key), fromHex(ed.signature), fromHex(ed.message)));
      assert.deepEqual(settleIx, settleBatchInstruction({ ...input, executionIds: [escrowBinding.executionId] }));
    });
  });
});
