// The hashes of the execute protocol (docs/execute-protocol.md): the request hash recorded by
// open_escrow, the result hash given to settle, the result digest the creator signs, the batch
// digest that stands for several of them in settle_batch, and the signing-key proof a new signing
// key signs (programs/agent_market/src/signature.rs).
import { sha256 } from "@noble/hashes/sha2";
import type { PublicKey } from "@solana/web3.js";

import { concatBytes, requireLength } from "./bytes.js";
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

/** `SHA-256(canonical JSON of output)`: the `result_hash` settle takes. */
export function outputHash(output: unknown): Uint8Array {
  return canonicalJsonHash(output);
}

/**
 * `SHA-256("agentmarket/result/v1" ‖ execution_id (16) ‖ agent (32) ‖ request_hash (32) ‖
 * result_hash (32))`: the 32 bytes the creator signs with its registered Ed25519 key.
 */
export function resultDigest(
  executionId: Uint8Array,
  agent: PublicKey,
  requestHash: Uint8Array,
  resultHash: Uint8Array,
): Uint8Array {
  return sha256(
    concatBytes(
      RESULT_DIGEST_DOMAIN,
      requireLength("executionId", executionId, 16),
      agent.toBytes(),
      requireLength("requestHash", requestHash, 32),
      requireLength("resultHash", resultHash, 32),
    ),
  );
}

/**
 * `SHA-256("agentmarket/result-batch/v1" ‖ agent (32) ‖ count (u32 LE) ‖ digest_1 ‖ … ‖
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
