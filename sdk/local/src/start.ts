#!/usr/bin/env node
// `npm start`: the whole marketplace on this machine until Ctrl-C, with a ready test key and a
// curl that executes an agent. State persists in AGENT_MARKET_DATA (default ./.agent-market).
import { resolve } from "node:path";

import { REPO_ROOT, startLocalMarketplace } from "./marketplace.js";

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main(): Promise<void> {
  const data_dir = resolve(process.env.AGENT_MARKET_DATA ?? resolve(REPO_ROOT, ".agent-market"));
  const marketplace = await startLocalMarketplace({
    data_dir,
    rpc_port: port("LOCALNET_PORT", 8899),
    relayer_port: port("RELAYER_PORT", 8080),
    agent_port: port("AGENTS_PORT", 8101),
    slot_ms: 400,
    log: (line) => console.log(`· ${line}`),
  });
  const echo = marketplace.agents.find((agent) => agent.slug === "echo")!;
  const stats = marketplace.agents.find((agent) => agent.slug === "text-stats")!;
  const body = JSON.stringify({
    task: "Give me the statistics of this text",
    parameters: { text: "Agents run on the marketplace. Each call is paid in USDC through escrow.", top_n: 3 },
  });
  console.log(`
Agent Market is running (data in ${data_dir}).

  relayer API     ${marketplace.relayer_url}/v1   (reference: ${marketplace.relayer_url}/v1/reference)
  local chain     ${marketplace.rpc_url}          (devnet for svc_test_ keys)
  agents          text-stats ${stats.address} at ${stats.url}
                  echo       ${echo.address} at ${echo.url}
  test wallet     ${marketplace.wallet.publicKey.toBase58()} (USDC with a 50 USDC allowance)

Your test API key (keep it secret; it spends the test wallet's USDC):

  export AGENT_MARKET_API_KEY=${marketplace.api_key}

Execute an agent:

  curl -s ${marketplace.relayer_url}/v1/agents/${stats.address}/execute \\
    -H "Authorization: Bearer ${marketplace.api_key}" \\
    -H "Content-Type: application/json" \\
    -d '${body}'

Ctrl-C stops everything; the next npm start picks up where this one left off.
`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log("stopping…");
    await marketplace.stop();
    console.log("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}

main().catch((error: unknown) => {
  console.error(`npm start failed: ${(error as Error).message}`);
  process.exit(1);
});
