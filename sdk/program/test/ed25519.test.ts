// The OpenSSL path of src/ed25519.ts against the noble-ed25519 one, and both against the strict
// rule of the Solana Ed25519 precompile (ed25519-dalek's verify_strict): what each refuses, and
// forgeries that a verifier without those refusals would take.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPublicKey, randomBytes, verify as opensslVerify } from "node:crypto";

import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2";
import { Keypair } from "@solana/web3.js";

import { ed25519Implementations, SMALL_ORDER_ENCODINGS, type Ed25519Implementation } from "../src/ed25519.js";
import { ed25519PublicKey, ed25519Sign, ed25519Verify, fromHex, toHex } from "../src/index.js";

const openssl = ed25519Implementations.openssl!;
const noble = ed25519Implementations.noble;
const both: [string, Ed25519Implementation][] = [
  ["openssl", openssl],
  ["noble", noble],
];

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const P = 2n ** 255n - 19n;

function toLittleEndian(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return bytes;
}

function fromLittleEndian(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]!);
  return value;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => Array.from(part)));
}

/** k = SHA-512(R ‖ A ‖ M) mod L, the challenge of every Ed25519 verification. */
function challenge(r: Uint8Array, publicKey: Uint8Array, message: Uint8Array): bigint {
  return fromLittleEndian(sha512(concat(r, publicKey, message))) % L;
}

/** OpenSSL's verification alone, without the checks src/ed25519.ts adds before it. */
function bareOpensslVerify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  const x = Buffer.from(publicKey).toString("base64url");
  return opensslVerify(null, message, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" }), signature);
}

function withBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[bit >> 3] ^= 1 << (bit & 7);
  return copy;
}

/** All 8 points of the torsion subgroup: [L]P is P's torsion component, and some P has one of order 8. */
function torsionSubgroup(): ed.Point[] {
  for (;;) {
    let point: ed.Point;
    try {
      point = ed.Point.fromBytes(randomBytes(32), true);
    } catch {
      continue;
    }
    const torsion = point.multiplyUnsafe(L - 1n).add(point);
    if (!torsion.double().double().is0()) return Array.from({ length: 8 }, (_, k) => torsion.multiplyUnsafe(BigInt(k)));
  }
}

describe("Ed25519 (src/ed25519.ts)", () => {
  it("runs on OpenSSL here", () => {
    assert.ok(ed25519Implementations.openssl, "node:crypto loads through process.getBuiltinModule");
  });

  describe("RFC 8032 §7.1 test vectors", () => {
    const vectors = [
      {
        name: "TEST 1",
        seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        message: "",
        signature:
          "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
      },
      {
        name: "TEST 2",
        seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        message: "72",
        signature:
          "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
      },
    ];
    for (const v of vectors) {
      it(`${v.name}: noble-ed25519 itself agrees with the RFC`, () => {
        assert.equal(toHex(ed.getPublicKey(fromHex(v.seed))), v.publicKey);
        assert.equal(toHex(ed.sign(fromHex(v.message), fromHex(v.seed))), v.signature);
      });
      for (const [name, impl] of both) {
        it(`${v.name}: ${name}`, () => {
          assert.equal(toHex(impl.publicKey(fromHex(v.seed))), v.publicKey);
          assert.equal(toHex(impl.sign(fromHex(v.seed), fromHex(v.message))), v.signature);
          assert.ok(impl.verify(fromHex(v.signature), fromHex(v.message), fromHex(v.publicKey)));
        });
      }
    }
  });

  it("falls back to noble-ed25519 where process.getBuiltinModule is missing (browsers, Node before 20.16)", function () {
    this.timeout(60_000);
    const seed = new Uint8Array(32).fill(3);
    const message = Uint8Array.of(1, 2, 3);
    const script = `
      delete process.getBuiltinModule;
      const m = await import(${JSON.stringify(new URL("../src/ed25519.ts", import.meta.url).href)});
      const seed = new Uint8Array(32).fill(3);
      const message = Uint8Array.of(1, 2, 3);
      const signature = m.ed25519Sign(seed, message);
      console.log(JSON.stringify({
        openssl: m.ed25519Implementations.openssl !== undefined,
        signature: Buffer.from(signature).toString("hex"),
        verifies: m.ed25519Verify(signature, message, m.ed25519PublicKey(seed)),
      }));`;
    const output = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
    assert.deepEqual(JSON.parse(output), { openssl: false, signature: toHex(noble.sign(seed, message)), verifies: true });
  });

  it("the exported functions are OpenSSL's", () => {
    const seed = randomBytes(32);
    const message = randomBytes(40);
    assert.deepEqual(ed25519PublicKey(seed), openssl.publicKey(seed));
    assert.deepEqual(ed25519Sign(seed, message), openssl.sign(seed, message));
    assert.ok(ed25519Verify(ed25519Sign(seed, message), message, ed25519PublicKey(seed)));
  });

  it("agree on 2,000 random keys and messages, and both refuse them tampered", function () {
    this.timeout(120_000);
    for (let i = 0; i < 2_000; i++) {
      const seed = randomBytes(32);
      const message = randomBytes(i % 200);
      const publicKey = openssl.publicKey(seed);
      assert.deepEqual(publicKey, noble.publicKey(seed));
      const signature = openssl.sign(seed, message);
      // Ed25519 signatures are deterministic: signing with one and verifying with the other
      // is verifying the same bytes with both.
      assert.deepEqual(signature, noble.sign(seed, message));
      assert.ok(openssl.verify(signature, message, publicKey), `openssl, case ${i}`);
      assert.ok(noble.verify(signature, message, publicKey), `noble, case ${i}`);
      if (i % 4 === 0) {
        const tampered: [Uint8Array, Uint8Array, Uint8Array] =
          i % 8 === 0 || message.length === 0
            ? [withBit(signature, i % 512), message, publicKey]
            : [signature, withBit(message, i % (8 * message.length)), publicKey];
        assert.equal(openssl.verify(...tampered), false, `openssl, tampered case ${i}`);
        assert.equal(noble.verify(...tampered), false, `noble, tampered case ${i}`);
      }
    }
  });

  it("a 64-byte Solana secret key signs as its 32-byte seed", () => {
    for (let i = 0; i < 20; i++) {
      const keypair = Keypair.generate();
      const seed = keypair.secretKey.slice(0, 32);
      const message = randomBytes(32);
      for (const [name, impl] of both) {
        assert.deepEqual(impl.publicKey(keypair.secretKey), keypair.publicKey.toBytes(), name);
        assert.deepEqual(impl.publicKey(seed), keypair.publicKey.toBytes(), name);
        assert.deepEqual(impl.sign(keypair.secretKey, message), impl.sign(seed, message), name);
      }
    }
  });

  it("a secret key array written over with another key signs as the new key", () => {
    const secretKey = randomBytes(32);
    const message = randomBytes(32);
    openssl.sign(secretKey, message);
    const before = openssl.publicKey(secretKey);
    secretKey.set(randomBytes(32));
    assert.deepEqual(openssl.sign(secretKey, message), noble.sign(secretKey, message));
    assert.notDeepEqual(openssl.publicKey(secretKey), before);
    assert.deepEqual(openssl.publicKey(secretKey), noble.publicKey(secretKey));
  });

  it("a public key handed out is a copy", () => {
    const seed = randomBytes(32);
    const publicKey = openssl.publicKey(seed);
    publicKey.fill(0);
    assert.deepEqual(openssl.publicKey(seed), noble.publicKey(seed));
  });

  describe("both refuse", () => {
    const seed = randomBytes(32);
    const message = randomBytes(32);
    const publicKey = noble.publicKey(seed);
    const signature = noble.sign(seed, message);

    const refuse = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array, what: string): void => {
      for (const [name, impl] of both) assert.equal(impl.verify(signature, message, publicKey), false, `${name}: ${what}`);
    };

    it("signatures of 63 or 65 bytes, public keys of 31 or 33", () => {
      refuse(signature.subarray(0, 63), message, publicKey, "63-byte signature");
      refuse(concat(signature, Uint8Array.of(0)), message, publicKey, "65-byte signature");
      refuse(signature, message, publicKey.subarray(0, 31), "31-byte key");
      refuse(signature, message, concat(publicKey, Uint8Array.of(0)), "33-byte key");
      refuse(new Uint8Array(0), message, publicKey, "empty signature");
    });

    it("S + L, the same signature with S unreduced", () => {
      const s = fromLittleEndian(signature.subarray(32));
      const unreduced = concat(signature.subarray(0, 32), toLittleEndian(s + L));
      // What a verifier that reduces S would take.
      assert.ok(ed.verify(concat(signature.subarray(0, 32), toLittleEndian((s + L) % L)), message, publicKey));
      refuse(unreduced, message, publicKey, "S + L");
      refuse(concat(signature.subarray(0, 32), toLittleEndian(L)), message, publicKey, "S = L");
    });

    it("public keys whose y is p or more (non-canonical), with either sign bit", () => {
      for (let extra = 0n; extra < 19n; extra++) {
        for (const sign of [0, 0x80]) {
          const encoding = toLittleEndian(P + extra);
          encoding[31] |= sign;
          refuse(signature, message, encoding, `y = p + ${extra}`);
        }
      }
    });

    it("a non-canonical identity key with R = identity and S = 0: a forgery OpenSSL alone takes for any message", () => {
      const identityPlusP = toLittleEndian(P + 1n);
      const forged = concat(toLittleEndian(1n), new Uint8Array(32));
      assert.ok(bareOpensslVerify(forged, message, identityPlusP), "OpenSSL reduces y mod p");
      refuse(forged, message, identityPlusP, "non-canonical identity key");
    });

    it("every small-order public key, with a random signature and with the forgery S = 0, R = -kA", () => {
      const torsion = torsionSubgroup();
      for (const publicKey of SMALL_ORDER_ENCODINGS) {
        refuse(randomBytes(64), message, publicKey, `key ${toHex(publicKey)}, random signature`);
        // R ranges over the torsion points until R = -kA for k = H(R ‖ A ‖ M), which makes
        // SB = R + kA hold with S = 0; one R in eight does.
        const point = ed.Point.fromBytes(publicKey, true);
        let forged: Uint8Array | undefined;
        for (let attempt = 0; !forged && attempt < 64; attempt++) {
          const m = randomBytes(32);
          for (const r of torsion) {
            const rBytes = r.toBytes();
            const k = challenge(rBytes, publicKey, m);
            if (r.add(point.multiplyUnsafe(k)).is0()) {
              forged = concat(rBytes, new Uint8Array(32));
              assert.ok(bareOpensslVerify(forged, m, publicKey), `OpenSSL alone takes key ${toHex(publicKey)}`);
              refuse(forged, m, publicKey, `key ${toHex(publicKey)}, forged`);
              break;
            }
          }
        }
        assert.ok(forged, `found a forgery for key ${toHex(publicKey)}`);
      }
    });

    it("a small-order R, which noble-ed25519's own strict verify takes", () => {
      // The key's owner can sign with any small-order R: S = k·a makes SB - kA the identity,
      // which is R once the cofactor is cleared, and is R itself when R is the identity.
      const { scalar } = ed.utils.getExtendedPublicKey(seed);
      for (const r of SMALL_ORDER_ENCODINGS) {
        const k = challenge(r, publicKey, message);
        const forged = concat(r, toLittleEndian((k * scalar) % L));
        const isIdentity = toHex(r) === "0100000000000000000000000000000000000000000000000000000000000000";
        assert.equal(bareOpensslVerify(forged, message, publicKey), isIdentity, `OpenSSL alone, R = ${toHex(r)}`);
        let strictlyDecodes = true;
        try {
          ed.Point.fromBytes(r);
        } catch {
          strictlyDecodes = false;
        }
        if (strictlyDecodes) {
          assert.ok(ed.verify(forged, message, publicKey, { zip215: false }), `noble's strict verify takes R = ${toHex(r)}`);
        }
        refuse(forged, message, publicKey, `R = ${toHex(r)}`);
      }
    });

    it("R encoded with y ≥ p (the identity as y = p + 1, the order-4 points as y = p), which ZIP-215 takes", () => {
      const { scalar } = ed.utils.getExtendedPublicKey(seed);
      for (const y of [P, P + 1n]) {
        for (const sign of [0, 0x80]) {
          const r = toLittleEndian(y);
          r[31] |= sign;
          const k = challenge(r, publicKey, message);
          const forged = concat(r, toLittleEndian((k * scalar) % L));
          if (y === P + 1n) assert.ok(ed.verify(forged, message, publicKey, { zip215: true }), "ZIP-215 takes it");
          // OpenSSL compares the canonical encoding of the recomputed R with R's bytes.
          assert.equal(bareOpensslVerify(forged, message, publicKey), false);
          refuse(forged, message, publicKey, `R with y = ${y - P} + p, sign ${sign}`);
        }
      }
    });
  });

  it("differ on a mixed-order key (a torsion point added to aB): OpenSSL, like verify_strict, has no cofactor", () => {
    // The precompile computes SB - kA and compares it with R: with A = aB + T and S = r + k·a,
    // that is R - kT, not R unless kT is the identity. noble's equation is multiplied by the
    // cofactor 8, which erases T.
    const order8 = torsionSubgroup()[1]!;
    const { scalar } = ed.utils.getExtendedPublicKey(randomBytes(32));
    const publicKey = ed.Point.BASE.multiply(scalar).add(order8).toBytes();
    for (;;) {
      const message = randomBytes(32);
      const r = BigInt(`0x${toHex(randomBytes(32))}`) % L;
      const rBytes = ed.Point.BASE.multiply(r).toBytes();
      const k = challenge(rBytes, publicKey, message);
      if (k % 8n === 0n) continue;
      const signature = concat(rBytes, toLittleEndian((r + k * scalar) % L));
      assert.equal(openssl.verify(signature, message, publicKey), false);
      assert.equal(noble.verify(signature, message, publicKey), true);
      break;
    }
  });

  describe("SMALL_ORDER_ENCODINGS", () => {
    const torsion = torsionSubgroup();
    const listed = new Set(SMALL_ORDER_ENCODINGS.map(toHex));

    it("are 10 distinct encodings of small-order points, naming all 8 of them", () => {
      assert.equal(listed.size, 10);
      const points = SMALL_ORDER_ENCODINGS.map((encoding) => ed.Point.fromBytes(encoding, true));
      for (const point of points) assert.ok(point.isSmallOrder());
      const distinct = new Set(points.map((point) => point.toHex()));
      assert.equal(distinct.size, 8);
      assert.deepEqual([...distinct].sort(), torsion.map((point) => point.toHex()).sort());
    });

    it("hold both sign bits of every torsion point's encoding", () => {
      for (const point of torsion) {
        const encoding = point.toBytes();
        assert.ok(listed.has(toHex(encoding)), `${toHex(encoding)} is listed`);
        const flipped = withBit(encoding, 255);
        assert.ok(listed.has(toHex(flipped)), `${toHex(flipped)} is listed`);
        // For x ≠ 0 the flipped encoding is the negated point, for x = 0 the same point.
        assert.ok(ed.Point.fromBytes(flipped, true).equals(point.x === 0n ? point : point.negate()));
      }
    });

    it("have y < p: the encodings with y ≥ p are the canonical-y check's to refuse", () => {
      for (const encoding of SMALL_ORDER_ENCODINGS) {
        assert.ok(fromLittleEndian(encoding) % 2n ** 255n < P);
      }
    });
  });
});
