// One marketplace agent as an MCP tool: its name and description from the listing, its price in
// the description, and its arguments the execute call's body, `parameters` being the listing's
// own input schema.
import { callPriceUsdc, formatUsdc, parseUsdc, type Agent, type Pricing } from "@agent-market/client";
import { meteredHold, parseWireUsdc } from "@agent-market/program";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

import { callPriceText } from "../pricing-text.js";

export interface AgentTool {
  agent: Agent;
  /**
   * The most one call through this server may cost, null when the server refuses the agent: what
   * a call reserves against the spending limits and sends as its maximum. The listing's price,
   * or a metered agent's whole units up to the server's per-call maximum.
   */
  max_charge_usdc: bigint | null;
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

/**
 * The most a call may cost under `max_price_usdc`: a fixed price when it is no more than that; a
 * metered call holds the units the smaller of the agent's and the server's maximum buys (what the
 * program holds for it), null when not one.
 */
function maxCharge(pricing: Pricing, max_price_usdc: bigint): bigint | null {
  if (pricing.model === "metered") {
    const hold = meteredHold(parseWireUsdc(pricing.price_per_unit_usdc), BigInt(pricing.max_units_per_call), max_price_usdc);
    return hold?.amountUsdc ?? null;
  }
  const price_usdc = parseUsdc(callPriceUsdc(pricing));
  return price_usdc <= max_price_usdc ? price_usdc : null;
}

/** What the description adds about this server's per-call maximum: nothing, a cap, or a refusal. */
function limitNote(pricing: Pricing, max_charge_usdc: bigint | null, max_price_usdc: bigint): string {
  const maximum = `the ${formatUsdc(max_price_usdc)} USDC per call it was started with`;
  if (pricing.model !== "metered") return max_charge_usdc === null ? ` This server refuses it: its price is above ${maximum}.` : "";
  if (max_charge_usdc === null) {
    return ` This server refuses it: one unit (${pricing.unit}) costs ${pricing.price_per_unit_usdc} USDC, more than ${maximum}.`;
  }
  if (max_charge_usdc === parseUsdc(callPriceUsdc(pricing))) return "";
  const units = max_charge_usdc / parseWireUsdc(pricing.price_per_unit_usdc);
  return ` This server lets a call use at most ${units} units (${formatUsdc(max_charge_usdc)} USDC), within ${maximum}.`;
}

export function agentTool(agent: Agent, max_price_usdc: bigint): AgentTool {
  const max_charge_usdc = maxCharge(agent.pricing, max_price_usdc);
  // A schema's $schema names the document's dialect; nested under `parameters` it says nothing.
  const { $schema: _dialect, ...parameters } = agent.input_schema;
  const metered = agent.pricing.model === "metered" ? " (charged for the units it uses, the rest returned)" : "";
  return {
    agent,
    max_charge_usdc,
    definition: {
      name: toolName(agent),
      title: agent.name,
      description:
        `${agent.description}\n\nAgent Market agent ${agent.id}. Price: ${callPriceText(agent.pricing)}${metered}, ` +
        `paid from the API key's wallet through on-chain escrow; refunded if the agent fails.` +
        limitNote(agent.pricing, max_charge_usdc, max_price_usdc),
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
