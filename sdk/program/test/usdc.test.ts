// USDC amounts: the one rule set behind the relayer's wire, the client's and CLI's input, the
// indexer's figures, and the dashboard; each case with its exact result or error.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { NETWORK_NAMES } from "../src/network.js";
import {
  formatSignedUsdc,
  formatUsdc,
  parseUsdc,
  parseWireUsdc,
  USDC_DECIMALS,
  USDC_WIRE_PATTERN,
} from "../src/usdc.js";

const U64_MAX = 18_446_744_073_709_551_615n;
const wireShape = (text: string) => ({ name: "TypeError", message: `not a USDC amount (digits, a point and exactly 6 decimal places): ${text}` });
const humanShape = (text: string) => ({ name: "TypeError", message: `not a USDC amount (digits, at most 6 decimal places): ${text}` });
const aboveU64 = (text: string) => ({ name: "RangeError", message: `${text} USDC is above the largest on-chain amount` });

describe("USDC amounts", () => {
  it("has six decimals", () => {
    assert.equal(USDC_DECIMALS, 6);
  });

  describe("formatUsdc", () => {
    it("writes six places", () => {
      assert.equal(formatUsdc(0n), "0.000000");
      assert.equal(formatUsdc(1n), "0.000001");
      assert.equal(formatUsdc(250_000n), "0.250000");
      assert.equal(formatUsdc(1_500_000n), "1.500000");
      assert.equal(formatUsdc(12_000_000n), "12.000000");
      assert.equal(formatUsdc(U64_MAX), "18446744073709.551615");
    });

    it("writes sums above u64 too", () => {
      assert.equal(formatUsdc(U64_MAX + 1n), "18446744073709.551616");
    });

    it("refuses a negative amount and anything not a bigint", () => {
      assert.throws(() => formatUsdc(-1n), { name: "RangeError", message: "a USDC amount is a bigint ≥ 0" });
      assert.throws(() => formatUsdc(-1_500_000n), { name: "RangeError", message: "a USDC amount is a bigint ≥ 0" });
      assert.throws(() => formatUsdc(1 as unknown as bigint), { name: "RangeError", message: "a USDC amount is a bigint ≥ 0" });
      assert.throws(() => formatUsdc("1" as unknown as bigint), { name: "RangeError", message: "a USDC amount is a bigint ≥ 0" });
    });
  });

  describe("formatSignedUsdc", () => {
    it("writes a difference, below zero included", () => {
      assert.equal(formatSignedUsdc(0n), "0.000000");
      assert.equal(formatSignedUsdc(1_500_000n), "1.500000");
      assert.equal(formatSignedUsdc(-1_500_000n), "-1.500000");
      assert.equal(formatSignedUsdc(-1n), "-0.000001");
      assert.equal(formatSignedUsdc(-1_000_000n), "-1.000000");
    });

    it("refuses anything not a bigint", () => {
      assert.throws(() => formatSignedUsdc(-1 as unknown as bigint), { name: "RangeError", message: "a USDC amount is a bigint ≥ 0" });
      assert.throws(() => formatSignedUsdc("1" as unknown as bigint), { name: "RangeError", message: "a USDC amount is a bigint ≥ 0" });
    });
  });

  describe("parseWireUsdc (the API's form)", () => {
    it("reads exactly six places", () => {
      assert.equal(parseWireUsdc("0.000000"), 0n);
      assert.equal(parseWireUsdc("0.000001"), 1n);
      assert.equal(parseWireUsdc("1.500000"), 1_500_000n);
      assert.equal(parseWireUsdc("12.500000"), 12_500_000n);
      assert.equal(parseWireUsdc("18446744073709.551615"), U64_MAX);
    });

    it("refuses every other form", () => {
      for (const text of ["", "0", "1", "1.5", "01.5", "01.500000", "00.000000", "1.", ".5", ".500000", "1.5000000", "-1.000000", "+1.000000", "1e6", "1e6.000000", " 1.000000", "1.000000 ", "1,000000", "0x1.000000", "١.٥٠٠٠٠٠"]) {
        assert.throws(() => parseWireUsdc(text), wireShape(text), JSON.stringify(text));
      }
      assert.throws(() => parseWireUsdc(1 as unknown as string), wireShape("1"));
    });

    it("refuses an amount above u64 (one unit more, and the pattern's fourteen-digit ceiling)", () => {
      assert.throws(() => parseWireUsdc("18446744073709.551616"), aboveU64("18446744073709.551616"));
      assert.throws(() => parseWireUsdc("99999999999999.999999"), aboveU64("99999999999999.999999"));
      assert.throws(() => parseWireUsdc("100000000000000.000000"), wireShape("100000000000000.000000"));
    });

    it("agrees with the JSON Schema pattern on every case", () => {
      const wire = new RegExp(USDC_WIRE_PATTERN);
      for (const text of ["0.000000", "1.500000", "18446744073709.551615", "99999999999999.999999"]) assert.ok(wire.test(text), text);
      for (const text of ["0", "1.5", "01.500000", "1.", ".5", "1.5000000", "-1.000000", "1e6", " 1.000000", "100000000000000.000000"]) {
        assert.ok(!wire.test(text), text);
      }
    });

    it("reads back what formatUsdc writes", () => {
      for (const units of [0n, 1n, 999_999n, 1_000_000n, 1_234_567n, U64_MAX]) assert.equal(parseWireUsdc(formatUsdc(units)), units);
    });
  });

  describe("parseUsdc (a person's input)", () => {
    it("reads up to six places, or none", () => {
      assert.equal(parseUsdc("0"), 0n);
      assert.equal(parseUsdc("0.000000"), 0n);
      assert.equal(parseUsdc("1"), 1_000_000n);
      assert.equal(parseUsdc("1.5"), 1_500_000n);
      assert.equal(parseUsdc("1.500000"), 1_500_000n);
      assert.equal(parseUsdc("0.25"), 250_000n);
      assert.equal(parseUsdc("0.000001"), 1n);
      assert.equal(parseUsdc("18446744073709.551615"), U64_MAX);
    });

    it("refuses signs, exponents, spaces, leading zeros, a bare point and a seventh place", () => {
      for (const text of ["", "01.5", "01", "00", "1.", ".5", "1.5000000", "0.0000001", "-1.000000", "-1", "+1", "1e6", "1e-6", " 1.000000", "1.000000 ", "1,5", "Infinity", "NaN", "0x10"]) {
        assert.throws(() => parseUsdc(text), humanShape(text), JSON.stringify(text));
      }
      assert.throws(() => parseUsdc(undefined as unknown as string), humanShape("undefined"));
    });

    it("refuses an amount above u64, however it is written", () => {
      assert.throws(() => parseUsdc("18446744073709.551616"), aboveU64("18446744073709.551616"));
      assert.throws(() => parseUsdc("18446744073710"), aboveU64("18446744073710"));
      assert.throws(() => parseUsdc("99999999999999999999"), aboveU64("99999999999999999999"));
    });
  });

  it("lives in entries that import nothing, so a browser bundle takes them without Anchor", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    assert.deepEqual(manifest.exports["./usdc"], { types: "./dist/usdc.d.ts", import: "./dist/usdc.js" });
    assert.deepEqual(manifest.exports["./network"], { types: "./dist/network.d.ts", import: "./dist/network.js" });
    for (const file of ["usdc.ts", "network.ts"]) {
      const source = readFileSync(new URL(`../src/${file}`, import.meta.url), "utf8");
      assert.doesNotMatch(source, /^\s*(import|export .* from)\b/m, file);
    }
  });

  it("names the networks a deployment serves", () => {
    assert.deepEqual(NETWORK_NAMES, ["devnet", "mainnet"]);
  });
});
