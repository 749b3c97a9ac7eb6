// The signing-key proof (docs/program.md, "Signing-key proof"): an agent's signing key signs
// `signingKeyProofDigest(agent, creator)` so that the creator may register it as that agent's
// key. Made wherever the key lives (its service, an HSM, `agent-market key-proof`), so the
// registering wallet never needs the key itself; carried base58 between tools.
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import { signingKeyProofDigest } from "./digest.js";
import { ed25519Sign, ed25519Verify } from "./ed25519.js";
import { parseAddress } from "./protocol.js";

const bs58 = utils.bytes.bs58;

/** An address as a PublicKey; a base58 text must be one (32 bytes). */
function address(what: string, value: PublicKey | string): PublicKey {
  if (typeof value !== "string") return value;
  const bytes = parseAddress(value);
  if (!bytes) throw new TypeError(`${what} is not a base58 address`);
  return new PublicKey(bytes);
}

/**
 * The proof (64 bytes) by `secretKey` (a 32-byte seed or Solana's 64-byte secret key) that
 * `creator` may register its public key as `agent`'s.
 */
export function signSigningKeyProof(
  secretKey: Uint8Array,
  agent: PublicKey | string,
  creator: PublicKey | string,
): Uint8Array {
  return ed25519Sign(secretKey, signingKeyProofDigest(address("agent", agent), address("creator", creator)));
}

/** Whether `proof` is `signingKey`'s signature over the proof digest, as the program will check it. */
export function verifySigningKeyProof(
  proof: Uint8Array,
  signingKey: Uint8Array,
  agent: PublicKey | string,
  creator: PublicKey | string,
): boolean {
  if (proof.length !== 64 || signingKey.length !== 32) return false;
  return ed25519Verify(proof, signingKeyProofDigest(address("agent", agent), address("creator", creator)), signingKey);
}

/** A proof as base58 text, the form the CLI prints and the dashboard and relayer take. */
export function formatSigningKeyProof(proof: Uint8Array): string {
  if (proof.length !== 64) throw new RangeError(`a signing-key proof is 64 bytes, got ${proof.length}`);
  return bs58.encode(proof);
}

/** The 64 bytes of a base58 proof, or null when it is not base58 of 64 bytes. */
export function parseSigningKeyProof(text: string): Uint8Array | null {
  if (typeof text !== "string") return null;
  try {
    const bytes = bs58.decode(text.trim());
    return bytes.length === 64 ? Uint8Array.from(bytes) : null;
  } catch {
    return null;
  }
}
