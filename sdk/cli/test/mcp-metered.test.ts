// A metered agent through the MCP server, against a fake API: its tool's description gives the
// most a call costs and the price of a unit, a call reserves that most (fewer whole units when the
// server's per-call maximum buys fewer) and, once settled, keeps only what it was charged spent.
import { strict as assert } from "node:assert";

import { AgentMarket } from "@agent-market/client";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { AgentCatalog } from "../src/mcp/agent-catalog.js";
import { SpendingLimit } from "../src/mcp/spending-limit.js";
import { callTool, type ToolCallContext } from "../src/mcp/tool-calls.js";
import { UnknownOutcomes } from "../src/mcp/unknown-outcomes.js";
import { json, serve, type Server } from "./helpers.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";
const LISTING = {
  object: "agent",
  id: AGENT,
  name: "Word stats",
  description: "Counts words.",
  status: "active",
  tags: [],
  pricing: { model: "metered", price_per_unit_usdc: "0.001000", unit: "100 words", max_units_per_call: "100" },
  input_schema: { type: "object" },
  output_schema: { type: "object" },
};
/** Settled for 3 of the units its escrow held. */
function settled(held: string, returned: string) {
  return {
    id: "exec_1",
    status: "succeeded",
    output: { words: 250 },
    charge: {
      amount_usdc: "0.003000",
      charged_usdc: "0.003000",
      held_usdc: held,
      returned_usdc: returned,
      units: "3",
      price_per_unit_usdc: "0.001000",
      max_units: String(Number(held) / 0.001),
      creator_share_usdc: "0.002970",
      fee_usdc: "0.000030",
      currency: "USDC",
      covered_by_subscription: false,
    },
    receipt: null,
    transactions: { settlement: "sig" },
  };
}

const text = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

describe("agent-market mcp: a metered agent", () => {
  let api: Server;
  let outcomes: UnknownOutcomes;
  afterEach(async () => {
    outcomes?.stop();
    await api?.close();
  });

  async function context(max_price_usdc: bigint, answer: unknown = settled("0.100000", "0.097000")): Promise<ToolCallContext> {
    api = await serve((request, _raw, res) => {
      if (request.method === "GET" && request.url.startsWith(`/v1/agents/${AGENT}`)) return json(res, 200, LISTING);
      if (request.method === "GET" && request.url.startsWith("/v1/agents?")) return json(res, 200, { object: "list", data: [LISTING], has_more: false });
      if (request.method === "POST" && request.url === `/v1/agents/${AGENT}/execute`) return json(res, 200, answer);
      json(res, 404, { error: { type: "not_found_error", code: "route_not_found", message: "no", request_id: "r" } });
    });
    const client = new AgentMarket({ apiKey: "svc_test_k", baseUrl: api.url, maxRetries: 0 });
    const catalog = new AgentCatalog(client, { network: "devnet", agents: [AGENT] }, max_price_usdc);
    await catalog.refresh();
    outcomes = new UnknownOutcomes(client, 100, () => {});
    return {
      client,
      catalog,
      max_price_usdc,
      network: "devnet",
      session_limit: new SpendingLimit(1_000_000n),
      process_limit: new SpendingLimit(1_000_000n),
      outcomes,
    };
  }

  const tool = (context: ToolCallContext) => context.catalog.tools()[0]!;
  const sent = () => api.requests.filter((request) => request.method === "POST").map((request) => request.body as { max_price_usdc: string });

  it("describes its price as up to the most a call costs, and the price of a unit", async () => {
    const one = await context(1_000_000n);
    assert.equal(
      tool(one).definition.description,
      `Counts words.\n\nAgent Market agent ${AGENT}. Price: up to 0.100000 USDC, 0.001000 per 100 words (charged for the units it uses, the rest returned), ` +
        "paid from the API key's wallet through on-chain escrow; refunded if the agent fails.",
    );
    assert.equal(tool(one).max_charge_usdc, 100_000n);
  });

  it("reserves the most a call costs, sends it as the maximum, and keeps only the charge spent once settled", async () => {
    const one = await context(1_000_000n);
    const result = await callTool(one, tool(one).definition.name, { task: "count" });
    assert.ok(!result.isError, text(result));
    assert.deepEqual(sent().map((body) => body.max_price_usdc), ["0.100000"]);
    assert.equal(one.session_limit.remaining_usdc(), 1_000_000n - 3_000n, "the 0.097000 returned is not spent");
    assert.equal(one.process_limit.held_usdc(), 0n);
    assert.match(text(result), /Charged 0\.003000 USDC for 3 units at 0\.001000 USDC, 0\.097000 of the 0\.100000 held returned for exec_1, settled on chain in sig\.$/);
  });

  it("counts the most a call may cost against the session's limit, though it would be charged less", async () => {
    const one = await context(1_000_000n);
    one.session_limit = new SpendingLimit(99_999n);
    const refused = await callTool(one, tool(one).definition.name, { task: "count" });
    assert.equal(
      text(refused),
      "This call may cost up to 0.100000 USDC; this session may spend 0.099999 USDC more of its 0.099999 USDC limit. Nothing was charged.",
    );
    assert.deepEqual(sent(), []);
  });

  it("under a lower per-call maximum, holds the whole units it buys, and says so", async () => {
    const one = await context(25_500n, settled("0.025000", "0.022000"));
    assert.equal(tool(one).max_charge_usdc, 25_000n);
    assert.match(
      tool(one).definition.description!,
      / This server lets a call use at most 25 units \(0\.025000 USDC\), within the 0\.025500 USDC per call it was started with\.$/,
    );
    await callTool(one, tool(one).definition.name, { task: "count" });
    assert.deepEqual(sent().map((body) => body.max_price_usdc), ["0.025000"]);
  });

  it("refuses it, nothing sent, when the per-call maximum buys not one unit", async () => {
    const one = await context(999n);
    assert.equal(tool(one).max_charge_usdc, null);
    assert.match(tool(one).definition.description!, / This server refuses it: one unit \(100 words\) costs 0\.001000 USDC, more than the 0\.000999 USDC per call it was started with\.$/);
    const refused = await callTool(one, tool(one).definition.name, { task: "count" });
    assert.equal(refused.isError, true);
    assert.equal(
      text(refused),
      "Word stats costs 0.001000 USDC per 100 words, above this server's maximum of 0.000999 USDC per call. Nothing was charged.",
    );
    assert.deepEqual(sent(), []);
    assert.equal(one.session_limit.remaining_usdc(), 1_000_000n);
  });

  it("search_agents gives its pricing and the most a call costs", async () => {
    const one = await context(1_000_000n);
    const found = await callTool(one, "search_agents", {});
    assert.equal(text(found), "Word stats (" + AGENT + "): up to 0.100000 USDC, 0.001000 per 100 words. Counts words.");
    const [agent] = (found.structuredContent as { agents: { price_usdc: string; pricing: unknown }[] }).agents;
    assert.equal(agent!.price_usdc, "0.100000");
    assert.deepEqual(agent!.pricing, LISTING.pricing);
  });
});
