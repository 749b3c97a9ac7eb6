// Program-derived addresses, the same as web3.js 1.x's PublicKey.findProgramAddressSync, at a
// fraction of its cost. Each candidate bump needs an "is this on the ed25519 curve" answer, which
// web3.js gets from noble-curves' point decompression: a square root mod p, about 255 BigInt
// squarings. Whether the root exists is all that is asked, and a Jacobi symbol answers that with
// a Euclid-like descent several times cheaper. The sha256 is OpenSSL's on Node, reached through
// process.getBuiltinModule (as in ed25519.ts: a bundler must find no Node built-in here), and
// noble-hashes' elsewhere.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2";
import { PublicKey } from "@solana/web3.js";

type NodeCrypto = typeof import("node:crypto");

/** The field prime p = 2^255 − 19. */
const P = (1n << 255n) - 19n;
/** The Edwards constant d = −121665/121666 mod p. */
const D = 0x52036cee2b6ffe738cc740797779e89800700a4d4141d8ab75eb4dca135978a3n;
const LOW_63_BITS = (1n << 63n) - 1n;
/** `SHIFTS[k]` is `BigInt(k)`, for shifts by a count known as a number. */
const SHIFTS = Array.from({ length: 32 }, (_, k) => BigInt(k));

function low32Bits(value: bigint): number {
  return Number(BigInt.asUintN(32, value));
}

/**
 * The Jacobi symbol (a/n) for odd n > 0 and 0 ≤ a < n: for a prime n, 1 if a is a nonzero square
 * mod n, −1 if it is not a square, 0 if a = 0. Reciprocity swaps the pair and reduces the larger
 * by the smaller, as Euclid's algorithm does; a factor 2 flips the sign when n ≡ 3, 5 (mod 8).
 * The sign rules read only the last three bits, kept as numbers: a BigInt operation costs
 * several times a number's.
 */
function jacobiSymbol(a: bigint, n: bigint): number {
  let sign = 1;
  let nLow = low32Bits(n);
  while (a !== 0n) {
    let aLow = low32Bits(a);
    // 2^32 is a square: whole zero words go without touching the sign.
    while (aLow === 0) {
      a >>= 32n;
      aLow = low32Bits(a);
    }
    const trailingZeros = 31 - Math.clz32(aLow & -aLow);
    if (trailingZeros !== 0) {
      a >>= SHIFTS[trailingZeros]!;
      const nMod8 = nLow & 7;
      if ((trailingZeros & 1) === 1 && (nMod8 === 3 || nMod8 === 5)) sign = -sign;
      aLow = low32Bits(a);
    }
    if ((aLow & nLow & 3) === 3) sign = -sign;
    const odd = a;
    a = n % odd;
    n = odd;
    nLow = aLow;
  }
  return n === 1n ? sign : 0;
}

/** The 32 bytes as a little-endian integer, the top bit (x's sign in a point encoding) cleared. */
function readY(bytes: Uint8Array): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, 32);
  return (
    view.getBigUint64(0, true) |
    (view.getBigUint64(8, true) << 64n) |
    (view.getBigUint64(16, true) << 128n) |
    ((view.getBigUint64(24, true) & LOW_63_BITS) << 192n)
  );
}

/**
 * Whether the 32 bytes encode a point of the ed25519 curve: what web3.js 1.x's
 * PublicKey.isOnCurve answers, i.e. whether noble-curves decodes them in its strict
 * (RFC 8032, not ZIP 215) mode. Throws a RangeError for any other length, where web3.js would
 * first pad or refuse the bytes as a public key.
 */
export function isOnCurve(bytes: Uint8Array): boolean {
  if (bytes.length !== 32) throw new RangeError(`a curve point is 32 bytes, got ${bytes.length}`);
  const y = readY(bytes);
  if (y >= P) return false;
  // x² = u/v with u = y² − 1 and v = d·y² + 1; a point exists iff u/v is a square mod p.
  const y2 = (y * y) % P;
  const u = y2 === 0n ? P - 1n : y2 - 1n;
  if (u === 0n) {
    // x = 0, and RFC 8032 refuses it with the sign bit set: 0 has no negative.
    return (bytes[31]! & 0x80) === 0;
  }
  const v = (D * y2 + 1n) % P;
  // u/v is a square iff u·v = (u/v)·v² is. v = 0 would need y² = −1/d, a non-square, so no y
  // gives it; if it did, u·v = 0 would give symbol 0 and false, as noble refuses u/0.
  return jacobiSymbol((u * v) % P, P) === 1;
}

/** A sha256 of the whole message. */
export type Sha256 = (message: Uint8Array) => Uint8Array;

const nodeCrypto: NodeCrypto | undefined = globalThis.process?.getBuiltinModule?.("node:crypto");

/**
 * Internal, for tests: both sha256 implementations, `node` undefined where node:crypto cannot be
 * loaded synchronously. Everything else calls findProgramAddress.
 */
export const sha256Implementations: { readonly node: Sha256 | undefined; readonly noble: Sha256 } = {
  node: nodeCrypto && ((message) => nodeCrypto.createHash("sha256").update(message).digest()),
  noble: (message) => nobleSha256(message),
};

const activeSha256 = sha256Implementations.node ?? sha256Implementations.noble;

/** The longest seed the runtime (and web3.js) takes. */
const MAX_SEED_BYTES = 32;
const PDA_MARKER = new TextEncoder().encode("ProgramDerivedAddress");

/**
 * Internal, for tests: findProgramAddress with the sha256 given. Same errors as web3.js 1.x: a
 * TypeError for a seed over 32 bytes, an Error when no bump gives an address off the curve.
 * Like web3.js 1.x, and unlike the runtime, it does not limit the number of seeds.
 */
export function findProgramAddressWith(sha256: Sha256, seeds: Uint8Array[], programId: PublicKey): [PublicKey, number] {
  let seedBytes = 0;
  for (const seed of seeds) {
    if (seed.length > MAX_SEED_BYTES) throw new TypeError("Max seed length exceeded");
    seedBytes += seed.length;
  }
  // seeds ‖ bump ‖ program id ‖ "ProgramDerivedAddress", built once; each bump rewrites one byte.
  const message = new Uint8Array(seedBytes + 1 + 32 + PDA_MARKER.length);
  let at = 0;
  for (const seed of seeds) {
    message.set(seed, at);
    at += seed.length;
  }
  const bumpAt = at;
  message.set(programId.toBytes(), bumpAt + 1);
  message.set(PDA_MARKER, bumpAt + 1 + 32);
  // From 255 down, and never 0: web3.js and the runtime's find_program_address stop at 1.
  for (let bump = 255; bump > 0; bump--) {
    message[bumpAt] = bump;
    const address = sha256(message);
    if (!isOnCurve(address)) return [new PublicKey(address), bump];
  }
  throw new Error("Unable to find a viable program address nonce");
}

/**
 * The program-derived address of `seeds` under `programId` and its bump: the same pair, and
 * the same errors, as web3.js 1.x's PublicKey.findProgramAddressSync.
 */
export function findProgramAddress(seeds: Uint8Array[], programId: PublicKey): [PublicKey, number] {
  return findProgramAddressWith(activeSha256, seeds, programId);
}
