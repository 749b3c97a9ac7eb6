// One MCP session's server: the tools the catalog holds now plus the two readers, each call run
// with this session's budget. The catalog is shared by every session of the process.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { SessionBudget } from "./session-budget.js";
import { callTool, GET_EXECUTION, SEARCH_AGENTS, type ToolCallContext } from "./tool-calls.js";

export type SessionOptions = Omit<ToolCallContext, "budget"> & { session_limit_usdc: bigint; version: string };

export function createSessionServer(options: SessionOptions): Server {
  const server = new Server(
    { name: "agent-market", title: "Agent Market", version: options.version },
    {
      capabilities: { tools: { listChanged: true } },
      instructions:
        "Each agent tool is a paid call to an Agent Market agent, charged in USDC to the wallet of this server's API key; " +
        "the price is in the tool's description. Calls above this server's per-call maximum or past the session's spending limit are refused.",
    },
  );
  const context: ToolCallContext = { ...options, budget: new SessionBudget(options.session_limit_usdc) };
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...options.catalog.tools().map((tool) => tool.definition), SEARCH_AGENTS, GET_EXECUTION],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(context, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>),
  );
  return server;
}
