// relayer/.env.devnet.example, which docs/deploy.md tells operators to copy: every variable it
// sets is one the relayer reads, and once its placeholders are filled it is a valid devnet
// configuration, so the example cannot drift from relayer/src/config.ts.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { Keypair } from "@solana/web3.js";

import { parseConfig } from "../src/config.js";
import { keypairFile } from "./support.js";

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), "..", ".env.devnet.example");
const CONFIG_SOURCE = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "config.ts");

/** KEY=value lines, as node --env-file and systemd's EnvironmentFile= read them; comments skipped. */
function readEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

describe("relayer/.env.devnet.example", () => {
  const text = readFileSync(EXAMPLE, "utf8");
  const env = readEnvFile(text);

  it("names only variables the relayer reads, and every required one", () => {
    const source = readFileSync(CONFIG_SOURCE, "utf8");
    const commented = [...text.matchAll(/^# ([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    // Per-network variables are read as `${prefix}_RPC_URL`, the others by their own name.
    const readName = (name: string) => name.replace(/^(DEVNET|MAINNET)_/, "${prefix}_");
    for (const name of [...Object.keys(env), ...commented]) {
      const read = readName(name);
      assert.ok(source.includes(read === name ? `"${name}"` : `\`${read}\``), `${name} is not read by config.ts`);
    }
    for (const name of ["DATABASE_URL", "API_KEY_HASH_SECRET", "MARKETPLACE_KEYPAIR", "RELAYER_KEYPAIR", "DEVNET_PROGRAM_ID", "DEVNET_RPC_URL", "REDIS_URL", "QUEUE_NAME", "PUBLIC_URL"]) {
      assert.ok(name in env, `the example sets ${name}`);
    }
    assert.ok(!("RELAYER_PORT" in env), "the port is left to each instance (systemd unit, Procfile)");
    assert.ok(!("MAINNET_RPC_URL" in env), "a devnet example serves devnet only");
  });

  it("parses into a devnet configuration once its placeholders are filled", () => {
    const programId = Keypair.generate().publicKey.toBase58();
    const filled = Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, value.replace(/<password>/, "secret").replace(/^<program id>$/, programId)]),
    );
    const config = parseConfig({
      ...filled,
      API_KEY_HASH_SECRET: randomBytes(32).toString("hex"),
      MARKETPLACE_KEYPAIR: keypairFile(),
      RELAYER_KEYPAIR: keypairFile(),
    });
    assert.deepEqual(Object.keys(config.networks), ["devnet"]);
    assert.equal(config.networks.devnet?.websocket_url, "wss://api.devnet.solana.com/");
    assert.equal(config.networks.devnet?.program_id.toBase58(), programId);
    assert.equal(config.public_url.origin, "https://api.devnet.agentmarket.example");
    assert.equal(config.cookie_secure, true);
    assert.equal(config.endpoint_policy, "public");
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.queue_name, "agent-market-devnet");
    assert.equal(config.relayer_min_balance_lamports, 2_000_000_000n);
    assert.ok(config.redis_url);
  });
});
