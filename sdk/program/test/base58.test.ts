import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { utils } from "@coral-xyz/anchor";

import { decodeBase58 } from "../src/base58.js";

const bs58 = utils.bytes.bs58;

describe("decodeBase58", () => {
  it("gives bs58's bytes for every length up to 700, with and without leading zero bytes", () => {
    for (let length = 0; length <= 700; length++) {
      const bytes = randomBytes(length);
      if (length % 3 === 0 && length > 0) bytes.fill(0, 0, Math.min(length, (length % 7) + 1));
      const text = bs58.encode(bytes);
      assert.deepEqual(Buffer.from(decodeBase58(text)), Buffer.from(bs58.decode(text)), `length ${length}: ${text}`);
    }
  });

  it("decodes the edge cases: empty, all zeros, all 0xff, a 32-byte key", () => {
    assert.deepEqual(decodeBase58(""), new Uint8Array(0));
    assert.deepEqual(decodeBase58("1111"), new Uint8Array(4));
    const ones = new Uint8Array(64).fill(0xff);
    assert.deepEqual(decodeBase58(bs58.encode(ones)), ones);
    assert.deepEqual(Buffer.from(decodeBase58("11111111111111111111111111111111")), Buffer.alloc(32));
    assert.equal(Buffer.from(decodeBase58("SysvarRent111111111111111111111111111111111")).toString("hex"), Buffer.from(bs58.decode("SysvarRent111111111111111111111111111111111")).toString("hex"));
  });

  it("refuses a character outside the alphabet (0, O, I, l, non-ASCII) naming it and where", () => {
    for (const [text, at] of [["0abc", 0], ["abcO", 3], ["12I", 2], ["l", 0], ["abc\u00e9", 3]] as const) {
      assert.throws(() => decodeBase58(text), (error: unknown) => error instanceof TypeError && error.message.endsWith(` at ${at}`), text);
    }
  });
});
