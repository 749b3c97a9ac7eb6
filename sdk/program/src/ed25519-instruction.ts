// The Ed25519 signature verification precompile's instruction, which settle, register_agent and a
// key-changing update_agent need right before them, and settle_batch carries for each signature.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { requireLength } from "./bytes.js";

/** The Ed25519 signature verification precompile. */
export const ED25519_PROGRAM_ID = new PublicKey("Ed25519SigVerify111111111111111111111111111");

/** Offsets of solana-ed25519-program's layout for one signature carried in the instruction. */
const ED25519_DATA_START = 2 + 14;
const ED25519_PUBKEY_OFFSET = ED25519_DATA_START;
const ED25519_SIGNATURE_OFFSET = ED25519_PUBKEY_OFFSET + 32;
const ED25519_MESSAGE_OFFSET = ED25519_SIGNATURE_OFFSET + 64;
/** Instruction index meaning "this instruction's own data". */
const THIS_INSTRUCTION = 0xffff;

/**
 * The Ed25519 precompile instruction that verifies `signature` by `signingKey` over `digest`,
 * byte for byte what solana-ed25519-program's `new_ed25519_instruction_with_signature` builds:
 * `[1, 0]`, then the offsets (signature 48, public key 16, message 112, message size, every
 * instruction index 0xFFFF: "this instruction"), then the key, the signature and the message.
 * It must come right before `settle` (over the result digest) and `register_agent` (over the
 * signing-key proof digest).
 */
export function ed25519VerifyInstruction(
  signingKey: Uint8Array,
  signature: Uint8Array,
  digest: Uint8Array,
): TransactionInstruction {
  requireLength("signingKey", signingKey, 32);
  requireLength("signature", signature, 64);
  requireLength("digest", digest, 32);
  const data = Buffer.alloc(ED25519_MESSAGE_OFFSET + digest.length);
  data.writeUInt8(1, 0); // one signature
  data.writeUInt8(0, 1); // padding
  data.writeUInt16LE(ED25519_SIGNATURE_OFFSET, 2);
  data.writeUInt16LE(THIS_INSTRUCTION, 4);
  data.writeUInt16LE(ED25519_PUBKEY_OFFSET, 6);
  data.writeUInt16LE(THIS_INSTRUCTION, 8);
  data.writeUInt16LE(ED25519_MESSAGE_OFFSET, 10);
  data.writeUInt16LE(digest.length, 12);
  data.writeUInt16LE(THIS_INSTRUCTION, 14);
  data.set(signingKey, ED25519_PUBKEY_OFFSET);
  data.set(signature, ED25519_SIGNATURE_OFFSET);
  data.set(digest, ED25519_MESSAGE_OFFSET);
  return new TransactionInstruction({ programId: ED25519_PROGRAM_ID, keys: [], data });
}
