// The indexer's program id: the network's DEVNET_PROGRAM_ID or MAINNET_PROGRAM_ID, required but
// on localnet (which loads the program at the IDL's address), and every configuration problem
// reported at once.
import { strict as assert } from "node:assert";

import { PROGRAM_ID } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { ConfigError, parseConfig } from "../src/config.js";

const base = {
  INDEXER_DATABASE_URL: "postgres://127.0.0.1:5432/indexer",
  INDEXER_RPC_URL: "http://127.0.0.1:8899",
};

describe("indexer configuration: the program id", () => {
  it("reads the indexed network's variable, localnet's being devnet's", () => {
    const devnet = Keypair.generate().publicKey.toBase58();
    const mainnet = Keypair.generate().publicKey.toBase58();
    const ids = { DEVNET_PROGRAM_ID: devnet, MAINNET_PROGRAM_ID: mainnet };
    assert.equal(parseConfig({ ...base, ...ids, INDEXER_NETWORK: "devnet" }).program_id.toBase58(), devnet);
    assert.equal(parseConfig({ ...base, ...ids, INDEXER_NETWORK: "localnet" }).program_id.toBase58(), devnet);
    assert.equal(parseConfig({ ...base, ...ids, INDEXER_NETWORK: "mainnet", NODE_ENV: "production" }).program_id.toBase58(), mainnet);
  });

  it("is required on devnet and mainnet, and the IDL's address on localnet when unset", () => {
    for (const network of ["devnet", "mainnet"]) {
      assert.throws(
        () => parseConfig({ ...base, INDEXER_NETWORK: network, NODE_ENV: "production" }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.deepEqual(error.problems, [`${network.toUpperCase()}_PROGRAM_ID is required: the program's address on ${network}`]);
          return true;
        },
      );
    }
    assert.ok(parseConfig({ ...base, INDEXER_NETWORK: "localnet" }).program_id.equals(PROGRAM_ID));
  });

  it("refuses one that is not an address, with the other problems", () => {
    assert.throws(
      () => parseConfig({ ...base, INDEXER_NETWORK: "devnet", DEVNET_PROGRAM_ID: "0OIl", INDEXER_PORT: "-1" }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.message.split("\n").slice(1), [
          '  - DEVNET_PROGRAM_ID must be the program\'s base58 address (32 bytes), got "0OIl"',
          '  - INDEXER_PORT must be an integer from 0 to 65535, got "-1"',
        ]);
        return true;
      },
    );
  });
});

describe("indexer configuration: mainnet", () => {
  it("turns GraphiQL and introspection off, and refuses to start outside production, naming NODE_ENV", () => {
    const program = { MAINNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58() };
    assert.equal(parseConfig({ ...base, ...program, INDEXER_NETWORK: "mainnet", NODE_ENV: "production" }).production, true);
    for (const NODE_ENV of [undefined, "development", "test"]) {
      assert.throws(
        () => parseConfig({ ...base, ...program, INDEXER_NETWORK: "mainnet", ...(NODE_ENV === undefined ? {} : { NODE_ENV }) }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.deepEqual(error.problems, [
            `NODE_ENV must be "production" with INDEXER_NETWORK=mainnet (no GraphiQL, no introspection), got "${NODE_ENV ?? "development"}"`,
          ]);
          return true;
        },
      );
    }
    // Devnet and localnet keep GraphiQL for development.
    assert.equal(parseConfig({ ...base, INDEXER_NETWORK: "localnet" }).production, false);
  });
});

describe("indexer configuration: the service kit's rules", () => {
  it("names every bad variable at once, in the relayer's wording", () => {
    const devnet = { DEVNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58() };
    assert.throws(
      () =>
        parseConfig({
          ...devnet,
          INDEXER_NETWORK: "testnet",
          INDEXER_DATABASE_URL: "mysql://127.0.0.1/indexer",
          INDEXER_RPC_URL: "ws://127.0.0.1:8900",
          INDEXER_LIVE: "yes",
          INDEXER_LOG_LEVEL: "loud",
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, [
          'INDEXER_NETWORK must be "devnet", "mainnet" or "localnet", got "testnet"',
          'INDEXER_DATABASE_URL must be a postgres: or postgresql: URL, got "mysql://127.0.0.1/indexer"',
          'INDEXER_RPC_URL must be a http: or https: URL, got "ws://127.0.0.1:8900"',
          'INDEXER_LIVE must be "true" or "false", got "yes"',
          'INDEXER_LOG_LEVEL must be "trace", "debug", "info", "warn", "error", "fatal" or "silent", got "loud"',
        ]);
        return true;
      },
    );
  });

  it("derives the websocket from the RPC URL, localnet's way, and reads the log level", () => {
    const config = parseConfig({ ...base, INDEXER_NETWORK: "localnet", INDEXER_LOG_LEVEL: "warn" });
    assert.equal(config.websocket_url, "ws://127.0.0.1:8900/");
    assert.equal(config.log_level, "warn");
    assert.equal(parseConfig({ ...base, INDEXER_NETWORK: "localnet" }).log_level, "info");
  });

  it("reads the RPC provider's calls a second, no budget unless told", () => {
    assert.equal(parseConfig({ ...base, INDEXER_NETWORK: "localnet" }).rpc_calls_per_second, 0);
    assert.equal(parseConfig({ ...base, INDEXER_NETWORK: "localnet", INDEXER_RPC_CALLS_PER_SECOND: "50" }).rpc_calls_per_second, 50);
    assert.throws(
      () => parseConfig({ ...base, INDEXER_NETWORK: "localnet", INDEXER_RPC_CALLS_PER_SECOND: "fast" }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, ['INDEXER_RPC_CALLS_PER_SECOND must be an integer from 0 to 1000000, got "fast"']);
        return true;
      },
    );
  });
});
