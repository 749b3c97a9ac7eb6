// One MCP session's server: the tools the catalog holds now plus the two readers, each call run
// within this session's limit and the process's. The catalog, the process's limit and the calls
// of unknown outcome are shared by every session of the process.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { outputProgress } from "./output-progress.js";
import { SpendingLimit } from "./spending-limit.js";
import { callTool, GET_EXECUTION, SEARCH_AGENTS, type ToolCallContext } from "./tool-calls.js";

export type SessionOptions = Omit<ToolCallContext, "session_limit"> & { session_limit_usdc: bigint; version: string };

export function createSessionServer(options: SessionOptions): Server {
  const server = new Server(
    { name: "agent-market", title: "Agent Market", version: options.version },
    {
      capabilities: { tools: { listChanged: true } },
      instructions:
        "Each agent tool is a paid call to an Agent Market agent, charged in USDC to the wallet of this server's API key; " +
        "the price is in the tool's description (a metered agent's: up to its most per call, charged for the units used). " +
        "Calls above this server's per-call maximum or past the session's or the server's spending limit are refused.",
    },
  );
  const context: ToolCallContext = { ...options, session_limit: new SpendingLimit(options.session_limit_usdc) };
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...options.catalog.tools().map((tool) => tool.definition), SEARCH_AGENTS, GET_EXECUTION],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    // Only a client that asked for progress gets the output streamed to it as it comes.
    const token = request.params._meta?.progressToken;
    const progress = token === undefined ? undefined : outputProgress(token, extra.sendNotification);
    return callTool(context, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, progress);
  });
  return server;
}
