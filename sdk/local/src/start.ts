#!/usr/bin/env node
// `npm start`: the whole marketplace on this machine until Ctrl-C, with a ready test key and a
// curl that executes an agent. State persists in AGENT_MARKET_DATA (default ./.agent-market).
// Exits non-zero with the reason when a process it runs dies and cannot be restarted.
import { resolve } from "node:path";

import { formatUsdc, parseWireUsdc } from "@agent-market/program";
import type { ExamplePricing } from "@agent-market/examples";

import { REPO_ROOT, STOP_BOUNDS_MS, startLocalMarketplace, type LocalMarketplace } from "./marketplace.js";

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/** An agent's price as callers see it: a fixed price per call, or the most a metered call costs and a unit's price. */
function priceText(pricing: ExamplePricing): string {
  if (pricing.model === "pay_per_use") return `${pricing.price_usdc} USDC per call`;
  const most = parseWireUsdc(pricing.price_per_unit_usdc) * BigInt(pricing.max_units_per_call);
  return `up to ${formatUsdc(most)} USDC, ${pricing.price_per_unit_usdc} per ${pricing.unit}`;
}

let marketplace: LocalMarketplace | undefined;
let stopping = false;
const starting = new AbortController();

/** Stops everything in order, then exits; a second signal meanwhile kills what is left at once. */
async function stop(code: number, why: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  const bound_s = Object.values(STOP_BOUNDS_MS).reduce((sum, ms) => sum + ms, 0) / 1000;
  console.log(`${why}: stopping (at most ${bound_s} s; Ctrl-C again to kill everything at once)…`);
  // While starting, the abort stops what has started and the start fails.
  starting.abort();
  await started.catch(() => undefined);
  await marketplace?.stop();
  console.log("stopped");
  process.exit(code);
}

function onSignal(signal: NodeJS.Signals): void {
  if (!stopping) return void stop(0, signal);
  console.log(`${signal} again: killing every process now (the next npm start stops any left running)`);
  marketplace?.kill();
  process.exit(130);
}

async function main(): Promise<void> {
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // npm start's own code failing must not leave its children running without it.
  process.on("uncaughtException", (error) => void stop(1, `npm start failed: ${error.stack ?? error.message}`));
  process.on("unhandledRejection", (error) => void stop(1, `npm start failed: ${(error as Error)?.stack ?? String(error)}`));
  const data_dir = resolve(process.env.AGENT_MARKET_DATA ?? resolve(REPO_ROOT, ".agent-market"));
  marketplace = await startLocalMarketplace({
    data_dir,
    rpc_port: port("LOCALNET_PORT", 8899),
    relayer_port: port("RELAYER_PORT", 8080),
    indexer_port: port("INDEXER_PORT", 8090),
    agent_port: port("AGENTS_PORT", 8101),
    postgres_port: port("POSTGRES_PORT", 8432),
    ...(process.env.DATABASE_URL ? { database_url: process.env.DATABASE_URL } : {}),
    slot_ms: 400,
    signal: starting.signal,
    log: (line) => console.log(`· ${line}`),
    on_fatal: (reason) => {
      console.error(`npm start stopped: ${reason}`);
      process.exit(1);
    },
  });
  const stats = marketplace.agents.find((agent) => agent.slug === "text-stats")!;
  const words = marketplace.agents.find((agent) => agent.slug === "word-stream")!;
  const width = Math.max(...marketplace.agents.map((agent) => agent.slug.length));
  const agents = marketplace.agents
    .map((agent) => `${agent.slug.padEnd(width)} ${agent.address} at ${agent.url}, ${priceText(agent.pricing)}`)
    .join(`\n${" ".repeat(18)}`);
  const body = JSON.stringify({
    task: "Give me the statistics of this text",
    parameters: { text: "Agents run on the marketplace. Each call is paid in USDC through escrow.", top_n: 3 },
  });
  console.log(`
Agent Market is running (data in ${data_dir}).

  dashboard       ${marketplace.relayer_url.replace("127.0.0.1", "localhost")}/   (sign in with the local test wallet)
  relayer API     ${marketplace.relayer_url}/v1   (reference: ${marketplace.relayer_url}/v1/reference)
  local chain     ${marketplace.rpc_url}          (devnet for svc_test_ keys)
  indexer         ${marketplace.indexer_url}   (GraphQL; GraphiQL in a browser)
  database        ${marketplace.database_url.replace(/:[^:@/]+@/, ":…@")}
  agents          ${agents}
  starter agents  ${marketplace.starter_url}/agents/…   (serves the agents you list on the dashboard's List an agent screen)
  test wallet     ${marketplace.wallet.publicKey.toBase58()} (USDC with a 50 USDC allowance)

Your test API key (keep it secret; it spends the test wallet's USDC):

  export AGENT_MARKET_API_KEY=${marketplace.api_key}

Execute an agent:

  curl -s ${marketplace.relayer_url}/v1/agents/${stats.address}/execute \\
    -H "Authorization: Bearer ${marketplace.api_key}" \\
    -H "Content-Type: application/json" \\
    -d '${body}'

Stream an agent's output as it is written (the words arrive one by one, then the result):

  curl -sN ${marketplace.relayer_url}/v1/agents/${words.address}/execute \\
    -H "Authorization: Bearer ${marketplace.api_key}" \\
    -H "Content-Type: application/json" -H "Accept: text/event-stream" \\
    -d '{"task":"Tell me a story","parameters":{"count":12}}'

Logs of each process are in ${data_dir}/logs.
Ctrl-C stops everything; the next npm start picks up where this one left off.
`);
}

const started = main();
started.catch((error: unknown) => {
  if (stopping) return;
  console.error(`npm start failed: ${(error as Error).message}`);
  process.exit(1);
});
