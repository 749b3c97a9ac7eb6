// What each tool does when called: an agent's tool runs a paid execution within the session's
// and the process's limits, `search_agents` and `get_execution` read. A refusal or a failure is a tool error (the
// model reads it) that says whether anything was charged and what to do.
import type { NetworkName } from "@agent-market/program/network";
import { randomUUID } from "node:crypto";

import {
  AgentMarketError,
  ConflictError,
  ExecutionFailedError,
  PaymentRequiredError,
  callPriceUsdc,
  formatUsdc,
  parseUsdc,
  type AgentMarket,
  type Execution,
} from "@agent-market/client";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";

import { chargeText } from "../charge-text.js";
import { callPriceText } from "../pricing-text.js";
import type { AgentCatalog } from "./agent-catalog.js";
import type { AgentTool } from "./agent-tool.js";
import type { OutputProgress } from "./output-progress.js";
import type { SpendingLimit } from "./spending-limit.js";
import { outcomeUnknown, settle, type SentCall, type UnknownOutcomes } from "./unknown-outcomes.js";

export const SEARCH_AGENTS: Tool = {
  name: "search_agents",
  title: "Search Agent Market",
  description: "Finds agents on Agent Market by text or tag: their addresses, descriptions and prices per call (a metered agent's most per call and price per unit).",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "Words searched in names and descriptions." },
      tag: { type: "string", description: "Only agents with this tag." },
    },
    additionalProperties: false,
  },
};

export const GET_EXECUTION: Tool = {
  name: "get_execution",
  title: "Get an execution",
  description: "Reads an execution made with this server's API key: its state, output, charge and receipt.",
  inputSchema: {
    type: "object",
    properties: { execution_id: { type: "string", description: "The execution's id (exec_…)." } },
    required: ["execution_id"],
    additionalProperties: false,
  },
};

export interface ToolCallContext {
  client: AgentMarket;
  catalog: AgentCatalog;
  session_limit: SpendingLimit;
  /** Shared by every session of the process. */
  process_limit: SpendingLimit;
  outcomes: UnknownOutcomes;
  max_price_usdc: bigint;
  network: NetworkName;
}

function refusal(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

function answer(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** Runs one tool call; with `progress`, an agent's output is reported piece by piece as it streams. */
export async function callTool(
  context: ToolCallContext,
  name: string,
  args: Record<string, unknown>,
  progress?: OutputProgress,
): Promise<CallToolResult> {
  if (name === SEARCH_AGENTS.name) return searchAgents(context, args);
  if (name === GET_EXECUTION.name) return getExecution(context, args);
  const tool = context.catalog.tool(name);
  if (!tool) return refusal(`No tool named ${name}: the list of tools may have changed; list them again.`);
  return runAgent(context, tool, args, progress);
}

/** The execution of `call`: streamed, each piece reported to `progress`, when there is one. */
async function execute(client: AgentMarket, call: SentCall, progress: OutputProgress | undefined): Promise<Execution> {
  const options = { maxPriceUsdc: call.max_price_usdc, idempotencyKey: call.idempotency_key };
  if (progress === undefined) return client.agents.execute(call.agent_id, call.input, options);
  const stream = await client.agents.executeStream(call.agent_id, call.input, options);
  for await (const chunk of stream) await progress(chunk.text);
  return stream.result;
}

async function searchAgents(context: ToolCallContext, args: Record<string, unknown>): Promise<CallToolResult> {
  const page = await context.client.agents.list({
    network: context.network,
    limit: 20,
    ...(typeof args.query === "string" && args.query ? { q: args.query } : {}),
    ...(typeof args.tag === "string" && args.tag ? { tag: args.tag } : {}),
  });
  const agents = page.data.map((agent) => ({
    id: agent.id,
    name: agent.name,
    description: agent.description,
    tags: agent.tags,
    // The most one call costs; `pricing` says how (a metered agent's unit and price per unit).
    price_usdc: callPriceUsdc(agent.pricing),
    pricing: agent.pricing,
  }));
  const lines = page.data.map((agent) => `${agent.name} (${agent.id}): ${callPriceText(agent.pricing)}. ${agent.description}`);
  return answer(lines.length > 0 ? lines.join("\n") : "No agent matches.", { agents });
}

async function getExecution(context: ToolCallContext, args: Record<string, unknown>): Promise<CallToolResult> {
  if (typeof args.execution_id !== "string") return refusal("execution_id is required: the id an agent's tool answered with (exec_…).");
  try {
    const execution = await context.client.executions.get(args.execution_id);
    return answer(JSON.stringify(execution, null, 2), { execution });
  } catch (error) {
    if (error instanceof AgentMarketError && error.status === 404) return refusal(`No execution ${args.execution_id} for this API key.`);
    throw error;
  }
}

function executionResult(execution: Execution): Record<string, unknown> {
  return {
    execution_id: execution.id,
    output: execution.output,
    charge: execution.charge,
    receipt: execution.receipt,
    transactions: execution.transactions,
  };
}

async function runAgent(
  context: ToolCallContext,
  tool: AgentTool,
  args: Record<string, unknown>,
  progress: OutputProgress | undefined,
): Promise<CallToolResult> {
  const { agent, max_charge_usdc } = tool;
  if (typeof args.task !== "string") return refusal("task is required: what to ask the agent, as text.");
  const parameters = args.parameters ?? {};
  if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) return refusal("parameters must be a JSON object.");
  if (max_charge_usdc === null) {
    const price = agent.pricing.model === "metered" ? `${agent.pricing.price_per_unit_usdc} USDC per ${agent.pricing.unit}` : callPriceText(agent.pricing);
    return refusal(
      `${agent.name} costs ${price}, above this server's maximum of ${formatUsdc(context.max_price_usdc)} USDC per call. Nothing was charged.`,
    );
  }
  // A metered call reserves the most it may cost; once settled, only its charge stays spent.
  const refused = reserve(context, max_charge_usdc, agent.pricing.model === "metered" ? "may cost up to" : "costs");
  if (refused) return refusal(refused);
  const call: SentCall = {
    agent_id: agent.id,
    input: { task: args.task, parameters: parameters as Record<string, unknown> },
    // The price the tool's description showed: a price raised on chain since is refused, not
    // charged; a metered call holds no more units than this buys.
    max_price_usdc: formatUsdc(max_charge_usdc),
    idempotency_key: randomUUID(),
    reserved_usdc: max_charge_usdc,
    limits: [context.session_limit, context.process_limit],
  };
  let execution: Execution;
  try {
    execution = await execute(context.client, call, progress);
  } catch (error) {
    if (outcomeUnknown(error)) {
      context.outcomes.follow(call);
      const code = error instanceof AgentMarketError ? error.code : "no_answer";
      return refusal(
        `The outcome of this call to ${agent.name} is unknown (${code}): it may have been charged. ` +
          `Its ${formatUsdc(max_charge_usdc)} USDC stays reserved against this server's limits until the server reads its final state; do not repeat it yet.`,
      );
    }
    settle(call, 0n);
    return failure(agent.name, error as AgentMarketError);
  }
  settle(call, parseUsdc(execution.charge.charged_usdc));
  const charge = `Charged ${chargeText(execution.charge)} for ${execution.id}` +
    (execution.transactions.settlement ? `, settled on chain in ${execution.transactions.settlement}.` : ".");
  return answer(`${JSON.stringify(execution.output, null, 2)}\n\n${charge}`, executionResult(execution));
}

/**
 * Reserves `price_usdc` on both limits, or says which one refuses it (reserving nothing): a call
 * that `costs` it, or a metered one that "may cost up to" it.
 */
function reserve(context: ToolCallContext, price_usdc: bigint, costs: string): string | undefined {
  const price = formatUsdc(price_usdc);
  if (!context.session_limit.reserve(price_usdc)) {
    return `This call ${costs} ${price} USDC; this session may spend ${formatUsdc(context.session_limit.remaining_usdc())} USDC more of its ${formatUsdc(context.session_limit.limit_usdc)} USDC limit. Nothing was charged.`;
  }
  if (!context.process_limit.reserve(price_usdc)) {
    context.session_limit.settle(price_usdc, 0n);
    return `This call ${costs} ${price} USDC; this server may spend ${formatUsdc(context.process_limit.remaining_usdc())} USDC more of its ${formatUsdc(context.process_limit.limit_usdc)} USDC limit for all sessions together. Nothing was charged.`;
  }
  return undefined;
}

/** A final refusal or failure: `outcomeUnknown` said no, so it is the API's answer. */
function failure(agent_name: string, error: AgentMarketError): CallToolResult {
  if (error instanceof PaymentRequiredError) {
    const next =
      error.code === "spending_cap_reached"
        ? "The API key's spending cap is reached: use a key with a higher cap."
        : error.code === "subscription_required"
          ? "The agent is sold by subscription: subscribe to it first (agent-market subscribe, or the dashboard)."
          : "The wallet cannot pay: add USDC or raise the marketplace allowance (the dashboard's Wallet screen, or agent-market allowance set).";
    return refusal(`${error.code}: ${error.message} Nothing was charged. ${next}`);
  }
  if (error instanceof ConflictError && (error.code === "price_above_maximum" || error.code === "agent_terms_changed")) {
    return refusal(`${agent_name}'s price changed since the tool list was read (${error.code}). Nothing was charged; list the tools again.`);
  }
  if (error instanceof ExecutionFailedError) {
    const refund = error.refundTransaction ? ` The escrow was refunded (transaction ${error.refundTransaction}).` : " Nothing was charged.";
    return refusal(`${agent_name} failed: ${error.message} (${error.code}, execution ${error.execution.id}).${refund}`);
  }
  return refusal(`${error.code}: ${error.message}`);
}
