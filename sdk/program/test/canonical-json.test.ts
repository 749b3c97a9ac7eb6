// RFC 8785 canonicalization edge cases beyond the golden vectors.
import assert from "node:assert/strict";

import { canonicalJson, CanonicalJsonError, outputHash, requestHash, toHex } from "../src/index.js";

describe("canonical JSON (RFC 8785)", () => {
  it("writes literals and containers without whitespace", () => {
    assert.equal(canonicalJson(null), "null");
    assert.equal(canonicalJson(true), "true");
    assert.equal(canonicalJson(false), "false");
    assert.equal(canonicalJson([]), "[]");
    assert.equal(canonicalJson({}), "{}");
    assert.equal(canonicalJson([[], {}, [null]]), "[[],{},[null]]");
    assert.equal(canonicalJson({ a: { b: { c: [1, { d: 2 }] } } }), '{"a":{"b":{"c":[1,{"d":2}]}}}');
  });

  it("writes numbers as ECMAScript does", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [-0, "0"],
      [1e21, "1e+21"],
      [1e20, "100000000000000000000"],
      [999999999999999900000, "999999999999999900000"],
      [0.1, "0.1"],
      [0.1 + 0.2, "0.30000000000000004"],
      [1e-6, "0.000001"],
      [1e-7, "1e-7"],
      [-1.5e-7, "-1.5e-7"],
      [Number.MAX_SAFE_INTEGER, "9007199254740991"],
      [Number.MIN_VALUE, "5e-324"],
      [-Number.MAX_VALUE, "-1.7976931348623157e+308"],
      [4.5, "4.5"],
      [333333333.33333329, "333333333.3333333"],
      [1e30, "1e+30"],
      [2e-3, "0.002"],
      [1e-27, "1e-27"],
      // RFC 8785 Appendix B
      [Number.parseFloat("295147905179352830000"), "295147905179352830000"],
      [Number.parseFloat("1e23"), "1e+23"],
      [Number.parseFloat("5e-324"), "5e-324"],
      [Number.parseFloat("9007199254740992"), "9007199254740992"],
      [Number.parseFloat("-9007199254740992"), "-9007199254740992"],
    ];
    for (const [value, text] of cases) assert.equal(canonicalJson(value), text, `${value}`);
  });

  it("refuses numbers JSON cannot carry", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      assert.throws(() => canonicalJson({ x: [value] }), CanonicalJsonError);
    }
  });

  it("escapes only what RFC 8785 escapes", () => {
    assert.equal(canonicalJson("\u0000\u0007\b\t\n\u000b\f\r\u001f"), '"\\u0000\\u0007\\b\\t\\n\\u000b\\f\\r\\u001f"');
    assert.equal(canonicalJson('"\\'), '"\\"\\\\"');
    // "/", DEL, C1 controls, U+2028/2029 and non-ASCII stay as they are.
    assert.equal(canonicalJson("/\u007f\u0080\u2028\u2029é€😀"), '"/\u007f\u0080\u2028\u2029é€😀"');
    assert.equal(canonicalJson({ "\n": 1 }), '{"\\n":1}');
  });

  it("refuses lone surrogates in strings and keys", () => {
    for (const bad of ["\ud800", "a\udc00b", "\ude00\ud83d", "x\ud83d"]) {
      assert.throws(() => canonicalJson(bad), CanonicalJsonError, JSON.stringify(bad));
      assert.throws(() => canonicalJson({ [bad]: 1 }), CanonicalJsonError, JSON.stringify(bad));
    }
    assert.equal(canonicalJson("\ud83d\ude00"), '"😀"');
  });

  it("sorts keys by UTF-16 code units, not code points or locale", () => {
    // U+FFFF sorts after U+10000's high surrogate (0xD800) in UTF-16, before it in code points.
    assert.equal(canonicalJson({ "\uffff": 1, "\u{10000}": 2 }), '{"\u{10000}":2,"\uffff":1}');
    assert.equal(canonicalJson({ b: 1, B: 2, a: 3, _: 4, "10": 5, "9": 6, "": 7 }), '{"":7,"10":5,"9":6,"B":2,"_":4,"a":3,"b":1}');
    assert.equal(canonicalJson({ é: 1, e: 2, f: 3 }), '{"e":2,"f":3,"é":1}');
  });

  it("does not depend on the order keys were inserted", () => {
    const a = { x: 1, y: { p: [1, 2], q: null } };
    const b = { y: { q: null, p: [1, 2] }, x: 1 };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(toHex(requestHash("t", a)), toHex(requestHash("t", b)));
  });

  it("refuses values that are not JSON data", () => {
    const bad: unknown[] = [
      undefined,
      { a: undefined },
      [undefined],
      () => 1,
      1n,
      Symbol("s"),
      new Date(0),
      new Map(),
      new (class Point { x = 1; })(),
      Object.assign(Object.create({ inherited: 1 }) as object, { own: 1 }),
      { [Symbol("k")]: 1 },
    ];
    for (const value of bad) assert.throws(() => canonicalJson(value), CanonicalJsonError, String(value));
    // eslint-disable-next-line no-sparse-arrays
    assert.throws(() => canonicalJson([1, , 3]), /sparse/);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.throws(() => canonicalJson(circular), /circular/);
  });

  it("accepts shared (non-circular) references and null-prototype objects", () => {
    const shared = { k: 1 };
    assert.equal(canonicalJson([shared, shared]), '[{"k":1},{"k":1}]');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.b = 1;
    bare.a = 2;
    assert.equal(canonicalJson(bare), '{"a":2,"b":1}');
  });

  it("hashes: the request hash covers task and parameters, the output hash the output", () => {
    assert.equal(requestHash("t", { a: 1 }).length, 32);
    assert.notEqual(toHex(requestHash("t", { a: 1 })), toHex(requestHash("t", { a: 2 })));
    assert.notEqual(toHex(requestHash("t", { a: 1 })), toHex(requestHash("u", { a: 1 })));
    assert.equal(toHex(requestHash("t", { a: 1 })), toHex(outputHash({ parameters: { a: 1 }, task: "t" })));
    // SHA-256 of "{}" and of "null".
    assert.equal(toHex(outputHash({})), "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    assert.equal(toHex(outputHash(null)), "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b");
  });
});
