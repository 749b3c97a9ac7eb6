// When a query runs compiled (graphql-jit): only a document run before, only a query.
import { strict as assert } from "node:assert";

import { parse } from "graphql";

import { compileOnRepeat } from "../src/graphql/compiled-queries.js";

describe("compiled queries", () => {
  it("compiles a query document from its second run on, each document counted on its own", () => {
    const compiled = compileOnRepeat();
    const document = parse("query Agent($a: String!) { agent(address: $a) { status } }");
    assert.deepEqual([compiled({ document }), compiled({ document }), compiled({ document })], [false, true, true]);
    // The same text parsed again is another document (the parser cache keeps one per text).
    assert.equal(compiled({ document: parse("query Agent($a: String!) { agent(address: $a) { status } }") }), false);
  });

  it("never compiles a subscription, nor the subscription of a document that also holds a query", () => {
    const compiled = compileOnRepeat();
    const subscription = parse("subscription { agentUpdated(address: \"x\") { status } }");
    assert.deepEqual([compiled({ document: subscription }), compiled({ document: subscription })], [false, false]);
    const both = parse("query Q { indexer { network } } subscription S { agentUpdated(address: \"x\") { status } }");
    assert.deepEqual([compiled({ document: both, operationName: "S" }), compiled({ document: both, operationName: "S" })], [false, false]);
    assert.deepEqual([compiled({ document: both, operationName: "Q" }), compiled({ document: both, operationName: "Q" })], [false, true]);
  });

  it("costs a client sending a new document every time no compilation", () => {
    const compiled = compileOnRepeat();
    for (let i = 0; i < 1_000; i++) assert.equal(compiled({ document: parse(`{ a${i}: indexer { network } }`) }), false);
  });
});
