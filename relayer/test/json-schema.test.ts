import { strict as assert } from "node:assert";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

import { ApiError } from "../src/errors.js";
import { checkSchema, validateAgainst } from "../src/listings/json-schema.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const LIMIT_BYTES = 64 * 1024;

function refusal(schema: object): ApiError {
  try {
    checkSchema(schema, "input_schema", LIMIT_BYTES, true);
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return error;
  }
  assert.fail("the schema was accepted");
}

describe("creators' JSON schemas", () => {
  it("matches a backtracking pattern in linear time: ^(a|a)*$ against a…a! answers at once", function () {
    // A backtracking engine takes 2^n steps here; mocha fails the test when it ends past the limit.
    this.timeout(2_000);
    const schema = { type: "object", properties: { text: { type: "string", pattern: "^(a|a)*$" } } };
    checkSchema(schema, "input_schema", LIMIT_BYTES, true);
    assert.equal(validateAgainst(schema, { text: "aaaa" }), null);
    for (const length of [32, 100_000]) {
      const violation = validateAgainst(schema, { text: `${"a".repeat(length)}!` });
      assert.deepEqual(violation, { path: "/text", message: 'must match pattern "^(a|a)*$"' });
    }
    const keys = { type: "object", patternProperties: { "^(b|b)*$": { type: "integer" } } };
    assert.equal(validateAgainst(keys, { [`${"b".repeat(40)}`]: "x" })?.path, `/${"b".repeat(40)}`);
    assert.equal(validateAgainst(keys, { [`${"b".repeat(40)}!`]: "x" }), null);
  });

  it("refuses at listing a pattern the linear-time engine cannot run (backreference, lookaround)", () => {
    for (const pattern of ["^(a)\\1$", "^(?=a)a$", "^(?<!b)a$"]) {
      const error = refusal({ type: "object", properties: { text: { type: "string", pattern } } });
      assert.equal(error.code, "invalid_schema", pattern);
      assert.equal(error.param, "input_schema");
    }
  });

  it("refuses uniqueItems without maxItems of at most 1000 (its check is quadratic in the items)", () => {
    const list = (extra: object) => ({ type: "object", properties: { items: { type: "array", uniqueItems: true, ...extra } } });
    const unbounded = refusal(list({}));
    assert.equal(unbounded.code, "invalid_schema");
    assert.equal(unbounded.message, "input_schema/properties/items has uniqueItems without maxItems of at most 1000.");
    assert.equal(refusal(list({ maxItems: 1001 })).code, "invalid_schema");
    checkSchema(list({ maxItems: 1000 }), "input_schema", LIMIT_BYTES, true);
    checkSchema(list({ uniqueItems: false }), "input_schema", LIMIT_BYTES, true);
  });

  it("refuses a schema whose subschemas, references expanded, pass 10000 (anyOf over $ref doubling at each level)", function () {
    // Validating a value against this tries 2^40 branches; refused before it is ever compiled.
    this.timeout(2_000);
    const $defs: Record<string, object> = { d40: { type: "string", pattern: "^x$" } };
    for (let i = 39; i >= 0; i -= 1) $defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    const bomb = { type: "object", properties: { text: { $ref: "#/$defs/d0" } }, $defs };
    const error = refusal(bomb);
    assert.equal(error.code, "invalid_schema");
    assert.equal(error.message, "input_schema has more than 10000 subschemas once its references are expanded.");
    // The same shape, ten levels deep, is fine.
    const small: Record<string, object> = { d10: { type: "string" } };
    for (let i = 9; i >= 0; i -= 1) small[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    checkSchema({ type: "object", properties: { text: { $ref: "#/$defs/d0" } }, $defs: small }, "input_schema", LIMIT_BYTES, true);
  });

  it("refuses a recursive $ref and one that is not a local JSON pointer", () => {
    const recursive = refusal({ type: "object", properties: { child: { $ref: "#" } } });
    assert.equal(recursive.message, "input_schema refers to itself through $ref (#): recursive schemas are not accepted.");
    const remote = refusal({ type: "object", properties: { child: { $ref: "https://example.com/schema.json" } } });
    assert.equal(remote.message, 'input_schema has a $ref that is not a local JSON pointer ("https://example.com/schema.json").');
  });

  it("keeps nothing of a schema once it has left the bounded validator cache", async function () {
    this.timeout(60_000);
    let schema: object | undefined = { type: "object", title: "first of many" };
    const first = new WeakRef(schema);
    assert.equal(validateAgainst(schema, {}), null);
    schema = undefined;
    // Distinct schemas, as many sessions posting listings would send: the first one is evicted.
    for (let i = 0; i < 1_001; i += 1) validateAgainst({ type: "object", title: `schema ${i}` }, {});
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    assert.equal(first.deref(), undefined, "the evicted schema is still held");
  });
});
