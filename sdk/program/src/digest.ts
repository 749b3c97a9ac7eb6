// The hashes of the execute protocol (docs/execute-protocol.md): the request hash recorded by
// open_escrow, the result hash given to settle_batch, the result digest the creator signs, the batch
// digest that stands for several of them in settle_batch, and the signing-key proof a new signing
// key signs (programs/agent_market/src/signature.rs).
import { sha256 } from "@noble/hashes/sha2";
import type { PublicKey } from "@solana/web3.js";

import { concatBytes, requireLength, u64Le } from "./bytes.js";
import { canonicalJson } from "./canonical-json.js";
import { BATCH_DIGEST_DOMAIN, RESULT_DIGEST_DOMAIN, SIGNING_KEY_PROOF_DOMAIN } from "./program.js";

export { canonicalJson, CanonicalJsonError } from "./canonical-json.js";

/** SHA-256 of the UTF-8 bytes of the RFC 8785 canonical JSON of `value`. */
export function canonicalJsonHash(value: unknown): Uint8Array {
  return sha256(new TextEncoder().encode(canonicalJson(value)));
}

/** `SHA-256(canonical JSON of {"task": task, "parameters": parameters})`: 32 bytes. */
export function requestHash(task: unknown, parameters: unknown): Uint8Array {
  return canonicalJsonHash({ task, parameters });
}

/** `SHA-256(canonical JSON of output)`: the `result_hash` settle_batch takes. */
export function outputHash(output: unknown): Uint8Array {
  return canonicalJsonHash(output);
}

/**
 * What makes an escrow this escrow, as the program recorded it at open (the fields of an Escrow
 * account of the same names): a decoded Escrow can be passed as is.
 */
export interface EscrowBinding {
  executionId: Uint8Array;
  agent: PublicKey;
  /** The agent's count of escrows opened before this one: never repeats for an agent. */
  nonce: bigint;
  /** The owner of `payerTokenAccount`. */
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  /** USDC base units the escrow holds. */
  amountUsdc: bigint;
  requestHash: Uint8Array;
}

/** What a creator's result signature is bound to: one escrow, and the result and units it answered. */
export interface ResultBinding {
  escrow: EscrowBinding;
  /** `outputHash(output)`. */
  resultHash: Uint8Array;
  /** Metered units the call used; 0 for a fixed-price call. */
  units: bigint;
}

/**
 * Execute protocol version 2: `SHA-256("agentmarket/result/v2" ‖ execution_id (16) ‖ agent (32)
 * ‖ nonce (u64 LE) ‖ payer (32) ‖ payer_token_account (32) ‖ amount_usdc (u64 LE) ‖ request_hash
 * (32) ‖ result_hash (32) ‖ units (u64 LE))`, 221 bytes hashed: the 32 bytes the creator signs
 * with its registered Ed25519 key. The nonce makes the signature settle this escrow and no other,
 * even one opened again under the same execution id.
 */
export function resultDigest(binding: ResultBinding): Uint8Array {
  const { escrow } = binding;
  return sha256(
    concatBytes(
      RESULT_DIGEST_DOMAIN,
      requireLength("executionId", escrow.executionId, 16),
      escrow.agent.toBytes(),
      u64Le("nonce", escrow.nonce),
      escrow.payer.toBytes(),
      escrow.payerTokenAccount.toBytes(),
      u64Le("amountUsdc", escrow.amountUsdc),
      requireLength("requestHash", escrow.requestHash, 32),
      requireLength("resultHash", binding.resultHash, 32),
      u64Le("units", binding.units),
    ),
  );
}

/**
 * `SHA-256("agentmarket/result-batch/v2" ‖ agent (32) ‖ count (u32 LE) ‖ digest_1 ‖ … ‖
 * digest_count)`: what the agent's key signs once for a `settle_batch` of its executions, over
 * their result digests in the batch's order. The program bounds the count (MAX_SETTLE_BATCH);
 * the digest itself is defined for any.
 */
export function batchDigest(agent: PublicKey, resultDigests: readonly Uint8Array[]): Uint8Array {
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, resultDigests.length, true);
  return sha256(
    concatBytes(
      BATCH_DIGEST_DOMAIN,
      agent.toBytes(),
      count,
      ...resultDigests.map((digest, i) => requireLength(`resultDigests[${i}]`, digest, 32)),
    ),
  );
}

/**
 * `SHA-256("agentmarket/signing-key/v1" ‖ agent (32) ‖ creator (32))`: the 32 bytes an agent's
 * signing key signs so that `creator` may register it (or set it) as the key of `agent`. The
 * program refuses `register_agent`, and an `update_agent` that changes the key, without an
 * Ed25519 verification of this signature right before it (docs/program.md, "Signing-key proof").
 */
export function signingKeyProofDigest(agent: PublicKey, creator: PublicKey): Uint8Array {
  return sha256(concatBytes(SIGNING_KEY_PROOF_DOMAIN, agent.toBytes(), creator.toBytes()));
}
