// The one reading of the environment the relayer and the indexer share: each problem names its
// variable, every problem is reported at once, and a value is trimmed (a blank one is unset).
import assert from "node:assert/strict";

import { ConfigError, EnvReader } from "../src/index.js";

describe("EnvReader", () => {
  it("reads text trimmed, blank as unset, and says what a required variable should hold", () => {
    const reader = new EnvReader({ NAME: "  market ", BLANK: "   " });
    assert.equal(reader.text("NAME"), "market");
    assert.equal(reader.text("BLANK"), undefined);
    assert.equal(reader.text("UNSET"), undefined);
    assert.equal(reader.required("NAME", "a name"), "market");
    assert.equal(reader.required("BLANK", "a URL (https://market.example)"), "");
    assert.deepEqual(reader.problems, ["BLANK is required: a URL (https://market.example)"]);
  });

  it("takes integers in decimal digits within their bounds, else the fallback and a problem", () => {
    const reader = new EnvReader({ OK: "8080", LOW: "-1", HIGH: "70000", FLOAT: "1.5", HEX: "0x10", WORD: "many" });
    assert.equal(reader.integer("OK", 1, 0, 65535), 8080);
    assert.equal(reader.integer("UNSET", 7, 0, 65535), 7);
    for (const name of ["LOW", "HIGH", "FLOAT", "HEX", "WORD"]) assert.equal(reader.integer(name, 7, 0, 65535), 7);
    assert.deepEqual(reader.problems, [
      'LOW must be an integer from 0 to 65535, got "-1"',
      'HIGH must be an integer from 0 to 65535, got "70000"',
      'FLOAT must be an integer from 0 to 65535, got "1.5"',
      'HEX must be an integer from 0 to 65535, got "0x10"',
      'WORD must be an integer from 0 to 65535, got "many"',
    ]);
  });

  it("takes URLs of the protocols asked for only", () => {
    const reader = new EnvReader({});
    assert.equal(reader.url("RPC", "https://rpc.example/", ["http:", "https:"])?.host, "rpc.example");
    assert.equal(reader.url("RPC", "ws://rpc.example/", ["http:", "https:"]), undefined);
    assert.equal(reader.url("RPC", "rpc.example", ["http:", "https:"]), undefined);
    assert.deepEqual(reader.problems, ['RPC must be a http: or https: URL, got "ws://rpc.example/"', 'RPC is not a URL: "rpc.example"']);
  });

  it("takes one of a closed set of values, and true or false for a flag", () => {
    const reader = new EnvReader({ MODE: "b", BAD: "d", ON: "false", YES: "yes", ONE: "1" });
    assert.equal(reader.choice("MODE", "a", ["a", "b", "c"]), "b");
    assert.equal(reader.choice("UNSET", "a", ["a", "b", "c"]), "a");
    assert.equal(reader.choice("BAD", "a", ["a", "b", "c"]), "a");
    assert.equal(reader.flag("ON", true), false);
    assert.equal(reader.flag("UNSET", true), true);
    assert.equal(reader.flag("YES", false), false);
    assert.equal(reader.flag("ONE", false), false);
    assert.deepEqual(reader.problems, [
      'BAD must be "a", "b" or "c", got "d"',
      'YES must be "true" or "false", got "yes"',
      'ONE must be "true" or "false", got "1"',
    ]);
  });

  it("answers the configuration when nothing was wrong, and every problem at once when something was", () => {
    assert.deepEqual(new EnvReader({}).finish("relayer", { port: 1 }), { port: 1 });
    const reader = new EnvReader({ PORT: "x" });
    reader.integer("PORT", 1, 0, 65535);
    reader.required("DATABASE_URL", "a PostgreSQL connection string");
    assert.throws(
      () => reader.finish("indexer", {}),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.name, "ConfigError");
        assert.equal(
          error.message,
          'invalid indexer configuration:\n  - PORT must be an integer from 0 to 65535, got "x"\n  - DATABASE_URL is required: a PostgreSQL connection string',
        );
        assert.equal(error.problems.length, 2);
        return true;
      },
    );
  });
});
