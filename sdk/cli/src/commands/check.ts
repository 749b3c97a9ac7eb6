import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";

import { parseAddress } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { checkConformance, type MeteredPricing } from "../conformance.js";
import { homeDir } from "../config.js";
import { readJsonFile } from "../files.js";
import { UsageError, type Command, type Io } from "../io.js";
import { readKeypair, writeNewKeypair } from "../keyfile.js";
import { integerOption, jsonObjectOption, parse, positiveU64Option, required, usdcOption } from "../options.js";
import { table } from "../table.js";

const usage = `agent-market check <endpoint> --key <public key> --input-schema <file> --output-schema <file>
                   [--agent <address>] [--marketplace-keypair <file>] [--parameters <json>]
                   [--task <text>] [--max-execution-secs <n>]
                   [--price-per-unit <usdc> --max-units-per-call <n>] [--json]

Runs the marketplace's conformance probe against your service, from your machine (loopback
endpoints are fine): a marketplace-signed POST <endpoint>/execute with parameters built from the
input schema (examples, defaults, smallest values) unless --parameters gives them, then checks the
answer's execution id, result hash, Ed25519 signature by --key, output schema and latency; and
that unsigned and replayed requests are refused. A second probe accepts text/event-stream, as a
call whose caller asked for a stream: a service that streams must send its output events in order
(seq 0, 1, 2…) and end with one result whose signature covers exactly what it streamed (a result
signed over anything else fails, as the marketplace refunds it); a service answering it JSON does
not stream, and those rows are skipped. Prints one row per check; exits 1 if any fails.

The service must trust the marketplace key that signs the request: --marketplace-keypair, else a
test key kept in $AGENT_MARKET_HOME/check-marketplace-keypair.json (printed, to start your service
with). --max-execution-secs is the limit you register (default 30). --agent is the agent account
the request names (default: a random one); a service made with @agent-market/creator answers only
for the agent addresses it is configured with.

A metered agent gives its terms: --price-per-unit and --max-units-per-call, as it registers them.
The probe then carries max_units and price_per_unit_usdc as a paid call does, and two more checks
run: the answer's units are signed and within max_units, and a second probe allowing one unit
fewer than the first used is refused or answered with no more units than it allows (the program
refuses to settle units above a call's max_units).`;

/** The test marketplace key of this machine, made on first use. */
async function testMarketplaceKey(io: Io): Promise<Keypair> {
  const path = join(homeDir(io), "check-marketplace-keypair.json");
  if (existsSync(path)) return readKeypair(path);
  await mkdir(homeDir(io), { recursive: true, mode: 0o700 });
  const keypair = Keypair.generate();
  await writeNewKeypair(path, keypair);
  return keypair;
}

export const check: Command = {
  name: "check",
  summary: "run the conformance probe against an agent's endpoint",
  usage,
  async run(args, io) {
    const { values, positionals } = parse(
      args,
      {
        key: { type: "string" },
        agent: { type: "string" },
        "input-schema": { type: "string" },
        "output-schema": { type: "string" },
        "marketplace-keypair": { type: "string" },
        parameters: { type: "string" },
        task: { type: "string" },
        "max-execution-secs": { type: "string", default: "30" },
        "price-per-unit": { type: "string" },
        "max-units-per-call": { type: "string" },
      },
      usage,
      1,
    );
    const endpoint = required(positionals[0], "<endpoint>", usage);
    try {
      new URL(endpoint);
    } catch {
      throw new UsageError(`${endpoint} is not a URL`, usage);
    }
    const key = required(values.key, "--key", usage);
    if (!parseAddress(key)) throw new UsageError(`--key ${key} is not a base58 Ed25519 public key`, usage);
    if (values.agent !== undefined && !parseAddress(values.agent)) {
      throw new UsageError(`--agent ${values.agent} is not a base58 address`, usage);
    }
    if ((values["price-per-unit"] === undefined) !== (values["max-units-per-call"] === undefined)) {
      throw new UsageError("a metered agent's check takes both --price-per-unit and --max-units-per-call", usage);
    }
    let metered: MeteredPricing | undefined;
    if (values["price-per-unit"] !== undefined && values["max-units-per-call"] !== undefined) {
      metered = {
        pricePerUnitUsdc: usdcOption(values["price-per-unit"], "--price-per-unit", usage),
        maxUnitsPerCall: positiveU64Option(values["max-units-per-call"], "--max-units-per-call", usage),
      };
      if (metered.pricePerUnitUsdc === 0n) throw new UsageError("--price-per-unit must be more than 0", usage);
    }
    const inputSchema = await readJsonFile(required(values["input-schema"], "--input-schema", usage), "input schema");
    const outputSchema = await readJsonFile(required(values["output-schema"], "--output-schema", usage), "output schema");
    const parameters = values.parameters === undefined ? undefined : jsonObjectOption(values.parameters, "--parameters", usage);
    const maxExecutionSecs = integerOption(values["max-execution-secs"], "--max-execution-secs", usage, 1, 900);
    let marketplace: Keypair;
    if (values["marketplace-keypair"] !== undefined) {
      marketplace = await readKeypair(values["marketplace-keypair"]);
    } else {
      marketplace = await testMarketplaceKey(io);
      io.err(`Signing as the test marketplace key ${marketplace.publicKey.toBase58()}: start your service trusting it.`);
    }

    const rows = await checkConformance({
      endpoint,
      signingKey: key,
      ...(values.agent === undefined ? {} : { agent: values.agent }),
      inputSchema,
      outputSchema,
      marketplaceSecretKey: marketplace.secretKey,
      ...(parameters === undefined ? {} : { parameters }),
      ...(values.task === undefined ? {} : { task: values.task }),
      maxExecutionSecs,
      ...(metered === undefined ? {} : { metered }),
    });
    const failed = rows.filter((row) => row.status === "fail").length;
    if (io.json) {
      io.out(JSON.stringify({ ok: failed === 0, checks: rows }, null, 2));
    } else {
      for (const line of table(["CHECK", "RESULT", "DETAIL"], rows.map((r) => [r.check, r.status.toUpperCase(), r.detail]))) io.out(line);
      const count = (status: string) => rows.filter((row) => row.status === status).length;
      io.out("");
      io.out(`${count("pass")} passed, ${failed} failed, ${count("warn")} warnings, ${count("skip")} skipped`);
    }
    if (failed > 0) {
      io.err(`${endpoint} does not conform yet: fix the failed checks (docs/execute-protocol.md) and run check again.`);
      return 1;
    }
    return 0;
  },
};

