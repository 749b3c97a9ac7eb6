import { AgentMarket } from "@agent-market/client";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

import { apiUrl, readConfig } from "../config.js";
import { CliError, UsageError, type Command } from "../io.js";
import { AgentCatalog } from "../mcp/agent-catalog.js";
import { serveHttp } from "../mcp/http-transport.js";
import { createSessionServer, type SessionOptions } from "../mcp/mcp-server.js";
import { integerOption, parse, required, usdcOption } from "../options.js";
import { version } from "../package-version.js";

const usage = `agent-market mcp --max-price <usdc> --session-limit <usdc> [--agent <address>]... [--tag <tag>] [--search <text>]
                 [--http <port>] [--host <address>] [--refresh-secs <n>] [--api-key <key>] [--api <url>]

Serves Agent Market's agents as Model Context Protocol tools, paid from the API key's wallet
(--api-key, else $AGENT_MARKET_API_KEY): over stdio for a desktop client, or over Streamable HTTP
at http://<host>:<port>/mcp with --http. The tools are the agents named with --agent, else those
with --tag or matching --search (at most 50), plus search_agents and get_execution.
--max-price is the most one call may cost and --session-limit the most one session may spend;
a call past either is refused as a tool error, nothing charged. Listings are read again every
--refresh-secs (30) and clients are told when the tools change. Over HTTP beyond 127.0.0.1 or
::1, clients must send Authorization: Bearer $AGENT_MARKET_MCP_TOKEN. Logs go to stderr.`;

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

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
        host: { type: "string", default: "127.0.0.1" },
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
    const token = io.env.AGENT_MARKET_MCP_TOKEN || undefined;
    if (port !== undefined && !LOOPBACK.has(values.host) && token === undefined) {
      throw new CliError(
        `--host ${values.host} lets other machines spend from this API key`,
        "set AGENT_MARKET_MCP_TOKEN to a secret the clients send as a bearer token, or serve on 127.0.0.1",
      );
    }
    const apiKey = values["api-key"] ?? io.env.AGENT_MARKET_API_KEY;
    if (!apiKey) throw new CliError("no API key", "pass --api-key <key> or set AGENT_MARKET_API_KEY (agent-market keys create makes one)");
    const config = await readConfig(io);
    const client = new AgentMarket({ apiKey, baseUrl: apiUrl(io, values.api, config) });
    const network = apiKey.startsWith("svc_live_") ? "mainnet" : "devnet";

    const catalog = new AgentCatalog(client, { network, agents: values.agent ?? [], tag: values.tag, search: values.search }, max_price_usdc);
    await catalog.refresh();
    io.err(`${catalog.tools().length} agent tool(s): ${catalog.tools().map((tool) => tool.definition.name).join(", ") || "none (search_agents still answers)"}`);
    const session: SessionOptions = { client, catalog, max_price_usdc, session_limit_usdc, network, version: version() };

    let servers: () => Server[];
    let close: () => Promise<void>;
    if (port === undefined) {
      const server = createSessionServer(session);
      await server.connect(new StdioServerTransport());
      servers = () => [server];
      close = () => server.close();
    } else {
      const running = await serveHttp({ host: values.host, port, ...(token ? { token } : {}), newSession: () => createSessionServer(session) });
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
    await close();
  },
};
