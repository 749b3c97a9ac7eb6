// isOnCurve (src/curve.ts) against web3.js 1.x's PublicKey.isOnCurve, which decodes the point
// with noble-curves: on random bytes, around the bounds of y, on x = 0 with and without the sign
// bit, on the small-order encodings and on real public keys.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { Keypair, PublicKey } from "@solana/web3.js";

import { SMALL_ORDER_ENCODINGS } from "../src/ed25519.js";
import { isOnCurve, toHex } from "../src/index.js";

const P = 2n ** 255n - 19n;
const SIGN_BIT = 2n ** 255n;

function toLittleEndian(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return bytes;
}

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  base %= modulus;
  for (; exponent > 0n; exponent >>= 1n) {
    if (exponent & 1n) result = (result * base) % modulus;
    base = (base * base) % modulus;
  }
  return result;
}

function assertAgrees(bytes: Uint8Array): boolean {
  const expected = PublicKey.isOnCurve(bytes);
  assert.equal(isOnCurve(bytes), expected, toHex(bytes));
  return expected;
}

describe("isOnCurve (src/curve.ts)", () => {
  it("agrees with web3.js on 20,000 random 32-byte strings, about half of them on the curve", () => {
    let onCurve = 0;
    for (let i = 0; i < 20_000; i++) if (assertAgrees(randomBytes(32))) onCurve++;
    assert.ok(onCurve > 9_000 && onCurve < 11_000, `${onCurve} on the curve`);
  });

  it("takes y = 0, y = 1 and y = p − 1 (x = 0 without the sign bit), refuses y ≥ p", () => {
    const cases: [string, bigint, boolean, boolean][] = [
      // name, y, expected without the sign bit, with it
      ["y = 0", 0n, true, true],
      ["y = 1", 1n, true, false],
      ["y = p − 1", P - 1n, true, false],
      ["y = p", P, false, false],
      ["y = p + 1", P + 1n, false, false],
      ["y = 2^255 − 1", SIGN_BIT - 1n, false, false],
    ];
    for (const [name, y, plain, signed] of cases) {
      assert.equal(isOnCurve(toLittleEndian(y)), plain, name);
      assert.equal(isOnCurve(toLittleEndian(y | SIGN_BIT)), signed, `${name}, sign bit set`);
      assertAgrees(toLittleEndian(y));
      assertAgrees(toLittleEndian(y | SIGN_BIT));
    }
  });

  it("agrees with web3.js on every y below 512 and from p − 512 to 2^255 − 1, with either sign bit", () => {
    for (let k = 0n; k < 512n; k++) {
      for (const y of [k, P - 512n + k]) {
        assertAgrees(toLittleEndian(y));
        assertAgrees(toLittleEndian(y | SIGN_BIT));
      }
    }
    for (let y = P; y < SIGN_BIT; y++) {
      assertAgrees(toLittleEndian(y));
      assertAgrees(toLittleEndian(y | SIGN_BIT));
    }
  });

  it("takes the small-order encodings, except x = 0 with the sign bit set", () => {
    const refused = SMALL_ORDER_ENCODINGS.filter((encoding) => !assertAgrees(encoding)).map(toHex);
    assert.deepEqual(refused, [
      "0100000000000000000000000000000000000000000000000000000000000080",
      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    ]);
  });

  it("takes real public keys, and their negations (the sign bit flipped)", () => {
    for (let i = 0; i < 500; i++) {
      const key = Keypair.generate().publicKey.toBytes();
      assert.equal(assertAgrees(key), true);
      const negated = Uint8Array.from(key);
      negated[31]! ^= 0x80;
      assert.equal(assertAgrees(negated), true);
    }
  });

  it("does not read beyond the view it is given", () => {
    const key = Keypair.generate().publicKey.toBytes();
    const offCurve = toLittleEndian(P);
    const backing = new Uint8Array(96);
    backing.set(offCurve, 0);
    backing.set(key, 32);
    backing.set(offCurve, 64);
    assert.equal(isOnCurve(backing.subarray(32, 64)), true);
    backing.set(toLittleEndian(P), 32);
    backing.set(key, 0);
    assert.equal(isOnCurve(backing.subarray(32, 64)), false);
  });

  it("refuses anything but 32 bytes", () => {
    assert.throws(() => isOnCurve(new Uint8Array(31)), RangeError);
    assert.throws(() => isOnCurve(new Uint8Array(33)), RangeError);
  });

  // isOnCurve tests u·v for a square; v = d·y² + 1 = 0 would make that say nothing of u/v.
  it("never meets v = 0: −1/d is not a square mod p", () => {
    const d = (P - ((121665n * modPow(121666n, P - 2n, P)) % P)) % P;
    const minusOneOverD = (P - modPow(d, P - 2n, P)) % P;
    assert.equal(modPow(minusOneOverD, (P - 1n) / 2n, P), P - 1n);
  });
});
