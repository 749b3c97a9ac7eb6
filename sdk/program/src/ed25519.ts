// Ed25519 keys, signatures and strict verification. On Node, OpenSSL through node:crypto: the
// relayer signs and verifies on every execution, and noble-ed25519 (pure JavaScript) costs
// hundreds of microseconds to milliseconds a call where OpenSSL costs tens. Browsers (and Node
// before 20.16, which cannot load node:crypto synchronously) use noble-ed25519. node:crypto is
// reached through process.getBuiltinModule, never imported: the consumer SDK's browser entry
// imports this package, and a bundler must find no Node built-in in it.
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2";

import { toHex } from "./bytes.js";
import { LruMap } from "./lru.js";

type NodeCrypto = typeof import("node:crypto");
type KeyObject = import("node:crypto").KeyObject;

export interface Ed25519Implementation {
  /** The 32-byte public key of a 32-byte seed or a 64-byte Solana secret key (seed ‖ public key). */
  publicKey(secretKey: Uint8Array): Uint8Array;
  sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array;
  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

// noble-ed25519 leaves the hash to the caller; sha512 returns a fresh (ArrayBuffer-backed) array.
ed.hashes.sha512 = (message) => sha512(message) as Uint8Array<ArrayBuffer>;

function fromHexConstant(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g)!, (byte) => parseInt(byte, 16));
}

/** The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian. */
const GROUP_ORDER = fromHexConstant("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");
/** The field prime p = 2^255 - 19, little-endian. */
const FIELD_PRIME = fromHexConstant("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");

/**
 * Every encoding with y < p of a point of the 8-torsion subgroup: the canonical encodings of
 * its 8 points, and the identity and (0, -1) with the sign bit set, which name x = 0 as
 * "negative" (RFC 8032 refuses them when decoding, lax decoders take them as the same points).
 * Encodings with y ≥ p fail the canonical-y check before this list is consulted.
 * test/ed25519.test.ts derives the list with noble-ed25519's point arithmetic.
 */
export const SMALL_ORDER_ENCODINGS: readonly Uint8Array[] = [
  "0100000000000000000000000000000000000000000000000000000000000000", // identity
  "0100000000000000000000000000000000000000000000000000000000000080", // identity, sign bit set
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // (0, -1), order 2
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // (0, -1), sign bit set
  "0000000000000000000000000000000000000000000000000000000000000000", // y = 0, order 4
  "0000000000000000000000000000000000000000000000000000000000000080",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
].map(fromHexConstant);

/** Whether the 32 little-endian bytes of `bytes` at `offset`, top bit cleared if `dropSignBit`, are below `bound`. */
function below(bytes: Uint8Array, offset: number, bound: Uint8Array, dropSignBit: boolean): boolean {
  for (let i = 31; i >= 0; i--) {
    const byte = i === 31 && dropSignBit ? bytes[offset + i]! & 0x7f : bytes[offset + i]!;
    if (byte !== bound[i]) return byte < bound[i]!;
  }
  return false;
}

function isSmallOrderEncoding(bytes: Uint8Array, offset: number): boolean {
  return SMALL_ORDER_ENCODINGS.some((encoding) => encoding.every((byte, i) => bytes[offset + i] === byte));
}

/**
 * What the Solana Ed25519 precompile (ed25519-dalek's verify_strict) refuses before any curve
 * arithmetic, and some verifiers let through: S ≥ L (a second encoding of the same signature),
 * a public key whose y is not reduced mod p, and a public key or R of small order, with which
 * one signature can verify for several messages or keys.
 */
function isStrictlyWellFormed(signature: Uint8Array, publicKey: Uint8Array): boolean {
  return (
    signature.length === 64 &&
    publicKey.length === 32 &&
    below(signature, 32, GROUP_ORDER, false) &&
    below(publicKey, 0, FIELD_PRIME, true) &&
    !isSmallOrderEncoding(publicKey, 0) &&
    !isSmallOrderEncoding(signature, 0)
  );
}

/** An Ed25519 secret: the 32-byte seed, or Solana's 64-byte seed ‖ public key form. */
function seedOf(secretKey: Uint8Array): Uint8Array {
  if (secretKey.length === 32) return secretKey;
  if (secretKey.length === 64) return secretKey.subarray(0, 32);
  throw new RangeError(`an Ed25519 secret key is 32 or 64 bytes, got ${secretKey.length}`);
}

const noble: Ed25519Implementation = {
  publicKey: (secretKey) => ed.getPublicKey(seedOf(secretKey)),
  sign: (secretKey, message) => ed.sign(message, seedOf(secretKey)),
  // noble's strict mode still takes a small-order R, which the shared checks refuse. Its equation is
  // multiplied by the cofactor, where OpenSSL's and verify_strict's are not: for a public key with
  // a torsion component it takes signatures they refuse (test/ed25519.test.ts shows one); no key
  // derived from a seed has one.
  verify(signature, message, publicKey) {
    if (!isStrictlyWellFormed(signature, publicKey)) return false;
    try {
      return ed.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  },
};

/**
 * PKCS #8 wrapping of a 32-byte Ed25519 seed: node:crypto takes no raw private key, and its JWK
 * form wants the public key as well.
 */
const PKCS8_SEED_PREFIX = fromHexConstant("302e020100300506032b657004220420");
/** A process signs with a key or two: the relayer's, the marketplace's. */
const SIGNING_KEY_CACHE_SIZE = 16;
/** The same agents' keys verify signature after signature. */
const VERIFYING_KEY_CACHE_SIZE = 1024;

function opensslImplementation(crypto: NodeCrypto): Ed25519Implementation {
  interface SigningKey {
    privateKey: KeyObject;
    publicKey?: Uint8Array;
  }
  // Importing a key costs more than ten signatures. Keyed by the seed's bytes rather than by the
  // caller's array: web3.js's Keypair.secretKey hands out a fresh copy on every read.
  const signingKeys = new LruMap<string, SigningKey>(SIGNING_KEY_CACHE_SIZE);
  const verifyingKeys = new LruMap<string, KeyObject>(VERIFYING_KEY_CACHE_SIZE);

  function signingKey(secretKey: Uint8Array): SigningKey {
    const seed = seedOf(secretKey);
    return signingKeys.getOrSet(toHex(seed), () => ({
      privateKey: crypto.createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: "der", type: "pkcs8" }),
    }));
  }

  function verifyingKey(publicKey: Uint8Array): KeyObject {
    return verifyingKeys.getOrSet(toHex(publicKey), () => {
      const x = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString("base64url");
      // A JWK imports about ten times faster than the SPKI DER of the same key.
      return crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
    });
  }

  return {
    publicKey(secretKey) {
      const key = signingKey(secretKey);
      key.publicKey ??= new Uint8Array(
        Buffer.from(crypto.createPublicKey(key.privateKey).export({ format: "jwk" }).x!, "base64url"),
      );
      // A copy: the caller may write into what it gets.
      return key.publicKey.slice();
    },
    sign(secretKey, message) {
      return new Uint8Array(crypto.sign(null, message, signingKey(secretKey).privateKey));
    },
    // OpenSSL checks S < L and compares the recomputed R with R's bytes (so only canonical R
    // encodings pass), without the cofactor, as verify_strict does; the small-order and
    // canonical public key checks are left to isStrictlyWellFormed.
    verify(signature, message, publicKey) {
      if (!isStrictlyWellFormed(signature, publicKey)) return false;
      return crypto.verify(null, message, verifyingKey(publicKey), signature);
    },
  };
}

const nodeCrypto: NodeCrypto | undefined = globalThis.process?.getBuiltinModule?.("node:crypto");

/**
 * Internal, for tests: both implementations, `openssl` undefined where node:crypto cannot be
 * loaded synchronously. Everything else calls ed25519PublicKey, ed25519Sign and ed25519Verify.
 */
export const ed25519Implementations: {
  readonly openssl: Ed25519Implementation | undefined;
  readonly noble: Ed25519Implementation;
} = {
  openssl: nodeCrypto && opensslImplementation(nodeCrypto),
  noble,
};

const active = ed25519Implementations.openssl ?? noble;

export function ed25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return active.publicKey(secretKey);
}

export function ed25519Sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return active.sign(secretKey, message);
}

/**
 * Strict RFC 8032 verification (canonical encodings, no small-order public key or R), the rule
 * the Solana Ed25519 precompile applies: a signature the relayer accepts is one settle will accept.
 */
export function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  return active.verify(signature, message, publicKey);
}
