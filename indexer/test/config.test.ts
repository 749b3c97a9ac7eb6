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
          assert.deepEqual(error.problems, [`${network.toUpperCase()}_PROGRAM_ID: required, the program's address on ${network}`]);
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
        assert.deepEqual(error.message.split("\n").slice(1).map((line) => line.trim()).sort(), [
          'DEVNET_PROGRAM_ID: not a base58 program address: "0OIl"',
          "INDEXER_PORT: expected an integer in [0, 65535], got \"-1\"",
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
          assert.deepEqual(error.message.split("\n").slice(1).map((line) => line.trim()), [
            `NODE_ENV: must be "production" with INDEXER_NETWORK=mainnet (no GraphiQL, no introspection), got "${NODE_ENV ?? "development"}"`,
          ]);
          return true;
        },
      );
    }
    // Devnet and localnet keep GraphiQL for development.
    assert.equal(parseConfig({ ...base, INDEXER_NETWORK: "localnet" }).production, false);
  });
});
