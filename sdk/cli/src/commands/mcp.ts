import { randomBytes } from "node:crypto";

import { AgentMarket } from "@agent-market/client";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

import { apiUrl, readConfig } from "../config.js";
import { CliError, UsageError, type Command } from "../io.js";
import { AgentCatalog } from "../mcp/agent-catalog.js";
import { serveHttp } from "../mcp/http-transport.js";
import { createSessionServer, type SessionOptions } from "../mcp/mcp-server.js";
import { SpendingLimit } from "../mcp/spending-limit.js";
import { UnknownOutcomes } from "../mcp/unknown-outcomes.js";
import { integerOption, parse, required, usdcOption } from "../options.js";
import { version } from "../package-version.js";

const usage = `agent-market mcp --max-price <usdc> --session-limit <usdc> [--agent <address>]... [--tag <tag>] [--search <text>]
                 [--http <port> --total-limit <usdc>] [--host <address>] [--allow-host <name>]... [--allow-origin <origin>]...
                 [--idle-secs <n>] [--refresh-secs <n>] [--api-key <key>] [--api <url>]

Serves Agent Market's agents as Model Context Protocol tools, paid from the API key's wallet
(--api-key, else $AGENT_MARKET_API_KEY): over stdio for a desktop client, or over Streamable HTTP
at http://<host>:<port>/mcp with --http. The tools are the agents named with --agent, else those
with --tag or matching --search (at most 50), plus search_agents and get_execution.
--max-price is the most one call may cost and --session-limit the most one session may spend;
over HTTP --total-limit is the most all sessions together may spend. A call past any of them is
refused as a tool error, nothing charged. A metered agent's call counts against the limits as the
most it may cost (its price per unit times its most units per call, or the whole units --max-price
buys when that is less) until it settles, then as what it was charged. Listings are read again every --refresh-secs (30) and
clients are told when the tools change. Over HTTP every request must send
Authorization: Bearer $AGENT_MARKET_MCP_TOKEN (generated and printed when unset), a Host naming
an address the server listens on or an --allow-host name, and no Origin unless --allow-origin
names it (403 otherwise); a session idle for --idle-secs (600) is closed. Logs go to stderr.`;

/** Between two reads of a call whose outcome is unknown. */
const OUTCOME_RETRY_MS = 5_000;

/** Resolves when the process is asked to stop (or, over stdio, when the client hangs up). */
function stopped(stdio: boolean): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
    if (stdio) {
      process.stdin.once("end", resolve);
      process.stdin.once("close", resolve);
    }
  });
}

export const mcp: Command = {
  name: "mcp",
  summary: "serve the marketplace's agents as MCP tools (stdio or HTTP)",
  usage,
  async run(args, io) {
    const { values } = parse(
      args,
      {
        agent: { type: "string", multiple: true },
        tag: { type: "string" },
        search: { type: "string" },
        "max-price": { type: "string" },
        "session-limit": { type: "string" },
        http: { type: "string" },
        "total-limit": { type: "string" },
        host: { type: "string", default: "127.0.0.1" },
        "allow-host": { type: "string", multiple: true },
        "allow-origin": { type: "string", multiple: true },
        "idle-secs": { type: "string", default: "600" },
        "refresh-secs": { type: "string", default: "30" },
        "api-key": { type: "string" },
        api: { type: "string" },
      },
      usage,
    );
    const max_price_usdc = usdcOption(required(values["max-price"], "--max-price", usage), "--max-price", usage);
    const session_limit_usdc = usdcOption(required(values["session-limit"], "--session-limit", usage), "--session-limit", usage);
    if (session_limit_usdc <= 0n) throw new UsageError("--session-limit must be more than 0", usage);
    const refresh_ms = integerOption(values["refresh-secs"], "--refresh-secs", usage, 1, 86_400) * 1000;
    const port = values.http === undefined ? undefined : integerOption(values.http, "--http", usage, 0, 65_535);
    const idle_ms = integerOption(values["idle-secs"], "--idle-secs", usage, 1, 86_400) * 1000;
    // Over stdio the process is one session: its limit is the whole process's.
    const total_limit_usdc =
      port === undefined ? session_limit_usdc : usdcOption(required(values["total-limit"], "--total-limit", usage), "--total-limit", usage);
    if (total_limit_usdc <= 0n) throw new UsageError("--total-limit must be more than 0", usage);
    const apiKey = values["api-key"] ?? io.env.AGENT_MARKET_API_KEY;
    if (!apiKey) throw new CliError("no API key", "pass --api-key <key> or set AGENT_MARKET_API_KEY (agent-market keys create makes one)");
    const config = await readConfig(io);
    const client = new AgentMarket({ apiKey, baseUrl: apiUrl(io, values.api, config) });
    const network = apiKey.startsWith("svc_live_") ? "mainnet" : "devnet";

    const catalog = new AgentCatalog(client, { network, agents: values.agent ?? [], tag: values.tag, search: values.search }, max_price_usdc);
    await catalog.refresh();
    io.err(`${catalog.tools().length} agent tool(s): ${catalog.tools().map((tool) => tool.definition.name).join(", ") || "none (search_agents still answers)"}`);
    const outcomes = new UnknownOutcomes(client, OUTCOME_RETRY_MS, io.err);
    const session: SessionOptions = {
      client,
      catalog,
      max_price_usdc,
      session_limit_usdc,
      process_limit: new SpendingLimit(total_limit_usdc),
      outcomes,
      network,
      version: version(),
    };

    let servers: () => Server[];
    let close: () => Promise<void>;
    if (port === undefined) {
      const server = createSessionServer(session);
      await server.connect(new StdioServerTransport());
      servers = () => [server];
      close = () => server.close();
    } else {
      let token = io.env.AGENT_MARKET_MCP_TOKEN;
      if (!token) {
        token = randomBytes(32).toString("base64url");
        io.err(`bearer token (clients send Authorization: Bearer <token>; set AGENT_MARKET_MCP_TOKEN to choose it): ${token}`);
      }
      const running = await serveHttp({
        host: values.host,
        port,
        token,
        allowed_hosts: values["allow-host"] ?? [],
        allowed_origins: values["allow-origin"] ?? [],
        idle_ms,
        newSession: () => createSessionServer(session),
      });
      io.err(`MCP over Streamable HTTP at ${running.url}`);
      servers = running.servers;
      close = running.close;
    }
    catalog.follow(
      refresh_ms,
      () => {
        io.err(`the tools changed: ${catalog.tools().map((tool) => tool.definition.name).join(", ") || "none"}`);
        for (const server of servers()) server.sendToolListChanged().catch(() => undefined);
      },
      (error) => io.err(`reading the listings failed: ${(error as Error).message}; the tools stay as they were`),
    );
    await stopped(port === undefined);
    catalog.stop();
    outcomes.stop();
    await close();
  },
};
