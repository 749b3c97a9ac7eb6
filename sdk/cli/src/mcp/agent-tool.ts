// One marketplace agent as an MCP tool: its name and description from the listing, its price in
// the description, and its arguments the execute call's body, `parameters` being the listing's
// own input schema.
import { callPriceUsdc, formatUsdc, parseUsdc, type Agent } from "@agent-market/client";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

export interface AgentTool {
  agent: Agent;
  /** What a call costs now, as the listing shows it. */
  price_usdc: bigint;
  definition: Tool;
}

/** MCP tool names: letters, digits, `_` and `-`, at most 64; the address keeps two agents with one name apart. */
export function toolName(agent: Agent): string {
  const words = agent.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 48);
  return `${words || "agent"}_${agent.id.slice(0, 8)}`;
}

export function agentTool(agent: Agent, max_price_usdc: bigint): AgentTool {
  const price_usdc = parseUsdc(callPriceUsdc(agent.pricing));
  // A schema's $schema names the document's dialect; nested under `parameters` it says nothing.
  const { $schema: _dialect, ...parameters } = agent.input_schema;
  const affordable = price_usdc <= max_price_usdc ? "" : ` This server refuses it: its price is above the ${formatUsdc(max_price_usdc)} USDC per call it was started with.`;
  return {
    agent,
    price_usdc,
    definition: {
      name: toolName(agent),
      title: agent.name,
      description:
        `${agent.description}\n\nAgent Market agent ${agent.id}. Price: ${formatUsdc(price_usdc)} USDC per call, ` +
        `paid from the API key's wallet through on-chain escrow; refunded if the agent fails.${affordable}`,
      inputSchema: {
        type: "object",
        properties: {
          task: { type: "string", description: "What to ask the agent." },
          parameters: parameters as Record<string, unknown>,
        },
        required: ["task"],
        additionalProperties: false,
      },
    },
  };
}
