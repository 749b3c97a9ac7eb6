import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { ConfigError, parseConfig } from "../src/config.js";
import { keypairFile } from "./support.js";

const valid = () => ({
  DATABASE_URL: "postgres://127.0.0.1:5432/agent_market",
  API_KEY_HASH_SECRET: randomBytes(32).toString("hex"),
  MARKETPLACE_KEYPAIR: keypairFile(),
  RELAYER_KEYPAIR: keypairFile(),
  DEVNET_RPC_URL: "http://127.0.0.1:8899",
});

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail("the configuration was accepted");
}

describe("configuration", () => {
  it("parses a minimal environment with the documented defaults", () => {
    const config = parseConfig(valid());
    assert.equal(config.port, 8080);
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.endpoint_policy, "public");
    assert.equal(config.networks.devnet?.websocket_url, "ws://127.0.0.1:8900/");
    assert.equal(config.networks.mainnet, undefined);
    assert.equal(config.marketplace_public_key.length, 32);
    assert.equal(config.cookie_secure, false);
    assert.equal(config.database_prepared_statements, true);
  });

  it("prepares statements unless told not to", () => {
    assert.equal(parseConfig({ ...valid(), DATABASE_PREPARED_STATEMENTS: "false" }).database_prepared_statements, false);
    assert.match(problems({ ...valid(), DATABASE_PREPARED_STATEMENTS: "yes" })[0]!, /DATABASE_PREPARED_STATEMENTS must be "true" or "false"/);
  });

  it("requires DATABASE_URL, the one way to name the database (the local marketplace passes its own)", () => {
    const { DATABASE_URL: _unused, ...rest } = valid();
    assert.match(problems(rest)[0]!, /^DATABASE_URL is required/);
    assert.deepEqual(
      problems({ ...valid(), EMBEDDED_DATABASE_DIR: "/tmp/x" }),
      ["EMBEDDED_DATABASE_DIR is no longer read: `npm start` runs its own PostgreSQL and sets DATABASE_URL"],
    );
  });

  it("reports every problem at once, each naming its variable", () => {
    const found = problems({ RELAYER_PORT: "eighty", ENDPOINT_POLICY: "open", API_KEY_HASH_SECRET: "abcd" });
    for (const variable of ["RELAYER_PORT", "DATABASE_URL", "API_KEY_HASH_SECRET", "MARKETPLACE_KEYPAIR", "DEVNET_RPC_URL", "ENDPOINT_POLICY"]) {
      assert.ok(found.some((p) => p.includes(variable)), `${variable} in ${found.join("; ")}`);
    }
  });

  it("refuses a keypair file that is not a Solana keypair", () => {
    const found = problems({ ...valid(), MARKETPLACE_KEYPAIR: "/nonexistent/keypair.json" });
    assert.equal(found.length, 1);
    assert.match(found[0]!, /MARKETPLACE_KEYPAIR/);
  });

  it("reads the relayer's minimum balance in SOL, 1 SOL unless told", () => {
    assert.equal(parseConfig(valid()).relayer_min_balance_lamports, 1_000_000_000n);
    assert.equal(parseConfig({ ...valid(), RELAYER_MIN_BALANCE_SOL: "2.5" }).relayer_min_balance_lamports, 2_500_000_000n);
    assert.equal(parseConfig({ ...valid(), RELAYER_MIN_BALANCE_SOL: "0.000000001" }).relayer_min_balance_lamports, 1n);
    for (const bad of ["-1", "1.0000000001", "one", "1e3"]) {
      assert.deepEqual(problems({ ...valid(), RELAYER_MIN_BALANCE_SOL: bad }), [
        `RELAYER_MIN_BALANCE_SOL must be an amount of SOL (up to 9 decimals), got "${bad}"`,
      ]);
    }
  });

  it("refuses URLs of the wrong kind", () => {
    assert.match(problems({ ...valid(), DATABASE_URL: "mysql://x/y" })[0]!, /DATABASE_URL must be a postgres: or postgresql: URL/);
    assert.match(problems({ ...valid(), MAINNET_RPC_URL: "ftp://rpc" })[0]!, /MAINNET_RPC_URL/);
  });
});
