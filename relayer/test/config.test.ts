import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { readFileSync } from "node:fs";

import { Keypair } from "@solana/web3.js";
import { Redis } from "ioredis";

import { ConfigError, parseConfig } from "../src/config.js";
import { COMMITTED_DEVELOPMENT_KEYS } from "../src/dev-keys.js";
import { redisOptions } from "../src/redis-options.js";
import { keypairFile } from "./support.js";

const devConfig = JSON.parse(readFileSync(new URL("../../localnet/dev-config.json", import.meta.url), "utf8")) as {
  keypairs: Record<string, number[]>;
};
const devKeypair = (name: string) => Keypair.fromSecretKey(Uint8Array.from(devConfig.keypairs[name]!));
const mainnet = () => ({
  PUBLIC_URL: "https://market.example",
  MAINNET_RPC_URL: "https://rpc.mainnet.example",
  MAINNET_RELAYER_KEYPAIR: keypairFile(),
  MAINNET_MARKETPLACE_KEYPAIR: keypairFile(),
  MAINNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58(),
});

const valid = () => ({
  DATABASE_URL: "postgres://127.0.0.1:5432/agent_market",
  API_KEY_HASH_SECRET: randomBytes(32).toString("hex"),
  MARKETPLACE_KEYPAIR: keypairFile(),
  RELAYER_KEYPAIR: keypairFile(),
  DEVNET_RPC_URL: "http://127.0.0.1:8899",
  DEVNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58(),
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
    assert.equal(config.networks.devnet?.marketplace_public_key.length, 32);
    assert.equal(config.cookie_secure, false);
    assert.equal(config.database_prepared_statements, true);
  });

  it("reads the in-flight limits and the circuit breaker, with their documented defaults and bounds", () => {
    const config = parseConfig(valid());
    assert.deepEqual(
      [
        config.executions_in_flight_per_key,
        config.executions_in_flight_per_agent,
        config.circuit_breaker_failures,
        config.circuit_breaker_window_secs,
        config.circuit_breaker_cooloff_secs,
      ],
      [64, 128, 20, 60, 60],
    );
    const set = parseConfig({ ...valid(), EXECUTIONS_IN_FLIGHT_PER_KEY: "2", CIRCUIT_BREAKER_COOLOFF_SECS: "5" });
    assert.deepEqual([set.executions_in_flight_per_key, set.circuit_breaker_cooloff_secs], [2, 5]);
    assert.match(problems({ ...valid(), EXECUTIONS_IN_FLIGHT_PER_AGENT: "0" })[0]!, /EXECUTIONS_IN_FLIGHT_PER_AGENT must be an integer from 1/);
    assert.match(problems({ ...valid(), CIRCUIT_BREAKER_FAILURES: "many" })[0]!, /CIRCUIT_BREAKER_FAILURES must be an integer/);
  });

  it("prepares statements unless told not to", () => {
    assert.equal(parseConfig({ ...valid(), DATABASE_PREPARED_STATEMENTS: "false" }).database_prepared_statements, false);
    assert.match(problems({ ...valid(), DATABASE_PREPARED_STATEMENTS: "yes" })[0]!, /DATABASE_PREPARED_STATEMENTS must be "true" or "false"/);
  });

  it("logs at info unless told, and names a level pino does not have", () => {
    assert.equal(parseConfig(valid()).log_level, "info");
    assert.equal(parseConfig({ ...valid(), LOG_LEVEL: "debug" }).log_level, "debug");
    assert.deepEqual(problems({ ...valid(), LOG_LEVEL: "verbose" }), [
      'LOG_LEVEL must be "trace", "debug", "info", "warn", "error", "fatal" or "silent", got "verbose"',
    ]);
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
    assert.match(problems({ ...valid(), ...mainnet(), MAINNET_RPC_URL: "ftp://rpc" })[0]!, /MAINNET_RPC_URL/);
  });

  it("reads each network's indexer URL, absent unless set, and refuses one that is not http(s)", () => {
    assert.equal(parseConfig(valid()).networks.devnet?.indexer_url, undefined);
    assert.equal(parseConfig({ ...valid(), DEVNET_INDEXER_URL: "http://127.0.0.1:8090/graphql" }).networks.devnet?.indexer_url, "http://127.0.0.1:8090/graphql");
    assert.deepEqual(problems({ ...valid(), DEVNET_INDEXER_URL: "ws://127.0.0.1:8090/graphql" }), [
      'DEVNET_INDEXER_URL must be a http: or https: URL, got "ws://127.0.0.1:8090/graphql"',
    ]);
    assert.deepEqual(problems({ ...valid(), ...mainnet(), MAINNET_INDEXER_URL: "indexer" }), ['MAINNET_INDEXER_URL is not a URL: "indexer"']);
  });

  it("reads each network's program id, requires it, and refuses one that is not an address", () => {
    const devnetProgram = Keypair.generate().publicKey.toBase58();
    const mainnetProgram = Keypair.generate().publicKey.toBase58();
    const both = parseConfig({ ...valid(), ...mainnet(), DEVNET_PROGRAM_ID: devnetProgram, MAINNET_PROGRAM_ID: mainnetProgram });
    assert.equal(both.networks.devnet?.program_id.toBase58(), devnetProgram);
    assert.equal(both.networks.mainnet?.program_id.toBase58(), mainnetProgram);
    // Unset, the IDL's address would be right on localnet only: the relayer does not start.
    const neither: Record<string, string> = { ...valid(), ...mainnet() };
    delete neither.DEVNET_PROGRAM_ID;
    delete neither.MAINNET_PROGRAM_ID;
    assert.deepEqual(problems(neither), [
      "DEVNET_PROGRAM_ID is required: the agent_market program's base58 address on devnet",
      "MAINNET_PROGRAM_ID is required: the agent_market program's base58 address on mainnet",
    ]);
    assert.deepEqual(problems({ ...valid(), ...mainnet(), DEVNET_PROGRAM_ID: "not-an-address", MAINNET_PROGRAM_ID: "111" }), [
      'DEVNET_PROGRAM_ID must be the program\'s base58 address (32 bytes), got "not-an-address"',
      'MAINNET_PROGRAM_ID must be the program\'s base58 address (32 bytes), got "111"',
    ]);
  });

  it("reads each network's relayer and marketplace keypairs, devnet falling back on the unprefixed names", () => {
    const relayer = Keypair.generate();
    const devnetRelayer = Keypair.generate();
    const env = { ...valid(), RELAYER_KEYPAIR: keypairFile(relayer), ...mainnet() };
    const config = parseConfig(env);
    assert.ok(config.networks.devnet!.relayer_keypair.publicKey.equals(relayer.publicKey));
    assert.ok(!config.networks.mainnet!.relayer_keypair.publicKey.equals(relayer.publicKey));
    const prefixed = parseConfig({ ...env, DEVNET_RELAYER_KEYPAIR: keypairFile(devnetRelayer) });
    assert.ok(prefixed.networks.devnet!.relayer_keypair.publicKey.equals(devnetRelayer.publicKey));
  });

  it("never lends mainnet the unprefixed keypairs: MAINNET_RELAYER_KEYPAIR and MAINNET_MARKETPLACE_KEYPAIR are required", () => {
    assert.deepEqual(problems({ ...valid(), PUBLIC_URL: "https://market.example", MAINNET_RPC_URL: "https://rpc.mainnet.example", MAINNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58() }), [
      "MAINNET_MARKETPLACE_KEYPAIR is required: path of a Solana keypair file (JSON array of 64 bytes) whose key signs requests to mainnet creators",
      "MAINNET_RELAYER_KEYPAIR is required: path of the Solana keypair file of the mainnet market's relayer (signs open_escrow, settle and refund, pays their fees)",
    ]);
  });

  it("refuses the committed development keypairs on mainnet", () => {
    assert.deepEqual(
      problems({ ...valid(), ...mainnet(), MAINNET_RELAYER_KEYPAIR: keypairFile(devKeypair("relayer")) }),
      ['MAINNET_RELAYER_KEYPAIR is the committed development keypair "relayer" of localnet/dev-config.json; mainnet needs a key of its own'],
    );
    assert.deepEqual(
      problems({ ...valid(), ...mainnet(), MAINNET_MARKETPLACE_KEYPAIR: keypairFile(devKeypair("authority")) }),
      ['MAINNET_MARKETPLACE_KEYPAIR is the committed development keypair "authority" of localnet/dev-config.json; mainnet needs a key of its own'],
    );
    // Devnet may use them: that is what they are for.
    assert.doesNotThrow(() => parseConfig({ ...valid(), RELAYER_KEYPAIR: keypairFile(devKeypair("relayer")) }));
  });

  it("knows every keypair of localnet/dev-config.json as a committed development key", () => {
    assert.deepEqual(
      [...COMMITTED_DEVELOPMENT_KEYS].sort(),
      Object.keys(devConfig.keypairs).map((name) => devKeypair(name).publicKey.toBase58()).sort(),
    );
  });

  it("gives the dashboard each hosted network's public RPC address, and refuses one it cannot use", () => {
    const dashboard = { DASHBOARD_DIR: "/srv/dashboard" };
    assert.deepEqual(parseConfig({ ...valid(), ...dashboard }).dashboard?.rpc_urls, {});
    const both = parseConfig({
      ...valid(),
      ...mainnet(),
      ...dashboard,
      DASHBOARD_DEVNET_RPC_URL: "https://api.devnet.solana.com",
      DASHBOARD_MAINNET_RPC_URL: "https://rpc.example/browser",
    });
    assert.deepEqual(both.dashboard?.rpc_urls, { devnet: "https://api.devnet.solana.com", mainnet: "https://rpc.example/browser" });
    assert.deepEqual(problems({ ...valid(), ...dashboard, DASHBOARD_MAINNET_RPC_URL: "https://rpc.example/browser" }), [
      "DASHBOARD_MAINNET_RPC_URL is set but mainnet is not served: set MAINNET_RPC_URL too",
    ]);
    assert.deepEqual(problems({ ...valid(), ...mainnet(), ...dashboard, DASHBOARD_MAINNET_RPC_URL: "http://rpc.example" }), [
      'DASHBOARD_MAINNET_RPC_URL must be a https: URL, got "http://rpc.example"',
    ]);
    assert.deepEqual(problems({ ...valid(), DASHBOARD_DEVNET_RPC_URL: "https://api.devnet.solana.com" }), [
      "DASHBOARD_DEVNET_RPC_URL is for the dashboard: set DASHBOARD_DIR too",
    ]);
    assert.deepEqual(problems({ ...valid(), ...dashboard, DASHBOARD_LOCALNET: "true", DASHBOARD_DEVNET_RPC_URL: "http://127.0.0.1:8899" }), [
      "DASHBOARD_DEVNET_RPC_URL is for a hosted chain: with DASHBOARD_LOCALNET the page reaches the local chain through the relayer",
    ]);
  });

  it("takes the starter host with the local dashboard only, its address and token together", () => {
    const local = { DASHBOARD_DIR: "/srv/dashboard", DASHBOARD_LOCALNET: "true" };
    const starter = { DASHBOARD_STARTER_AGENT_URL: "http://127.0.0.1:8105/", DASHBOARD_STARTER_AGENT_TOKEN: "t0ken" };
    assert.deepEqual(parseConfig({ ...valid(), ...local, ...starter }).dashboard?.starter_agent, { url: "http://127.0.0.1:8105", token: "t0ken" });
    assert.equal(parseConfig({ ...valid(), ...local }).dashboard?.starter_agent, undefined);
    assert.deepEqual(problems({ ...valid(), DASHBOARD_DIR: "/srv/dashboard", ...starter }), [
      "DASHBOARD_STARTER_AGENT_URL is the local marketplace's: set DASHBOARD_DIR and DASHBOARD_LOCALNET too",
    ]);
    assert.deepEqual(problems({ ...valid(), ...local, DASHBOARD_STARTER_AGENT_URL: "http://127.0.0.1:8105" }), [
      "DASHBOARD_STARTER_AGENT_URL and DASHBOARD_STARTER_AGENT_TOKEN go together",
    ]);
    assert.deepEqual(problems({ ...valid(), ...local, ...starter, DASHBOARD_STARTER_AGENT_URL: "ftp://host" }), [
      'DASHBOARD_STARTER_AGENT_URL must be a http: or https: URL, got "ftp://host"',
    ]);
  });

  it("serves mainnet only over https, with Secure cookies and Redis over TLS, naming each variable", () => {
    const config = parseConfig({ ...valid(), ...mainnet(), REDIS_URL: "rediss://redis.example:6380/0" });
    assert.equal(config.public_url.protocol, "https:");
    assert.equal(config.cookie_secure, true);
    assert.deepEqual(
      problems({ ...valid(), ...mainnet(), PUBLIC_URL: "http://market.example", COOKIE_SECURE: "false", REDIS_URL: "redis://redis.example:6379/0" }),
      [
        'PUBLIC_URL must be an https: URL with MAINNET_RPC_URL, got "http://market.example/"',
        "COOKIE_SECURE=false is refused with MAINNET_RPC_URL: session cookies must be Secure",
        "REDIS_URL must be a rediss:// (TLS) URL with MAINNET_RPC_URL",
      ],
    );
    const withoutPublicUrl: Record<string, string> = { ...valid(), ...mainnet() };
    delete withoutPublicUrl.PUBLIC_URL;
    assert.deepEqual(problems(withoutPublicUrl), [
      'PUBLIC_URL must be an https: URL with MAINNET_RPC_URL, got "http://localhost:8080/"',
    ]);
    // Devnet alone keeps its local defaults.
    assert.equal(parseConfig({ ...valid(), PUBLIC_URL: "http://localhost:8080", REDIS_URL: "redis://127.0.0.1:6379" }).cookie_secure, false);
  });

  it("opens and refunds in batches unless told, refuses the retired SETTLEMENT, and names a bad BATCH_OPENS, BATCH_REFUNDS, LOOKUP_TABLES or BATCH_GATHER_MS", () => {
    const defaults = parseConfig(valid());
    assert.equal(defaults.batch_opens, true);
    assert.equal(defaults.batch_refunds, true);
    assert.equal(defaults.lookup_tables, true);
    assert.equal(defaults.batch_gather_ms, 60);
    const perCall = parseConfig({ ...valid(), BATCH_OPENS: "false", BATCH_REFUNDS: "false", LOOKUP_TABLES: "false", BATCH_GATHER_MS: "25" });
    assert.equal(perCall.batch_opens, false);
    assert.equal(perCall.batch_refunds, false);
    assert.equal(perCall.lookup_tables, false);
    assert.equal(perCall.batch_gather_ms, 25);
    assert.deepEqual(problems({ ...valid(), SETTLEMENT: "log", BATCH_OPENS: "yes", BATCH_REFUNDS: "1", LOOKUP_TABLES: "no" }), [
      "SETTLEMENT is no longer read: every result settles by settle_batch into its agent's receipt log (the per-call design is retired)",
      'BATCH_OPENS must be "true" or "false", got "yes"',
      'BATCH_REFUNDS must be "true" or "false", got "1"',
      'LOOKUP_TABLES must be "true" or "false", got "no"',
    ]);
    assert.match(problems({ ...valid(), BATCH_GATHER_MS: "1001" })[0]!, /BATCH_GATHER_MS must be an integer from 0/);
  });

  it("refuses ENDPOINT_POLICY=development with a mainnet RPC", () => {
    assert.deepEqual(problems({ ...valid(), ...mainnet(), ENDPOINT_POLICY: "development" }), [
      "ENDPOINT_POLICY=development is refused with MAINNET_RPC_URL: mainnet agents must be public https endpoints",
    ]);
    assert.equal(parseConfig({ ...valid(), ENDPOINT_POLICY: "development" }).endpoint_policy, "development");
  });

  it("connects to Redis with TLS for rediss://, with the URL's user name and password", () => {
    assert.deepEqual(redisOptions("rediss://queue:s%40cret@redis.example:6380/2"), {
      host: "redis.example",
      port: 6380,
      username: "queue",
      password: "s@cret",
      db: 2,
      tls: { servername: "redis.example" },
    });
    assert.deepEqual(redisOptions("redis://127.0.0.1"), { host: "127.0.0.1", port: 6379 });
    assert.deepEqual(problems({ ...valid(), REDIS_URL: "redis://127.0.0.1:6379/queue" }), [
      'REDIS_URL\'s path must be a database number (/0 to /99), got "/queue"',
    ]);
  });

  it("authenticates to Redis as the URL's ACL user", async () => {
    const admin = new Redis(redisOptions(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"));
    const user = `relayer_test_${randomBytes(4).toString("hex")}`;
    const password = randomBytes(8).toString("hex");
    try {
      await admin.call("ACL", "SETUSER", user, "on", `>${password}`, "~*", "+@all");
      const base = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
      base.username = user;
      base.password = password;
      const client = new Redis({ ...redisOptions(base.href), lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        assert.equal(await client.call("ACL", "WHOAMI"), user);
      } finally {
        client.disconnect();
      }
    } finally {
      await admin.call("ACL", "DELUSER", user);
      admin.disconnect();
    }
  });
});
