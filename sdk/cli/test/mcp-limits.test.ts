// The MCP server's money rules against a fake API: the process's limit holds across sessions (a
// new session never brings fresh money), and a call whose outcome is unknown keeps its reservation
// until the same request, asked again with its Idempotency-Key, gives the final state.
import { strict as assert } from "node:assert";
import type { ServerResponse } from "node:http";

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
  name: "Echo",
  description: "Echoes.",
  status: "active",
  tags: [],
  pricing: { model: "pay_per_use", price_usdc: "0.010000" },
  input_schema: { type: "object" },
  output_schema: { type: "object" },
};
const EXECUTION = {
  id: "exec_1",
  status: "succeeded",
  output: { echoed: "hi" },
  charge: {
    amount_usdc: "0.010000",
    charged_usdc: "0.010000",
    held_usdc: "0.010000",
    returned_usdc: "0.000000",
    units: "0",
    price_per_unit_usdc: null,
    max_units: null,
    creator_share_usdc: "0.009900",
    fee_usdc: "0.000100",
  },
  receipt: null,
  transactions: { settlement: "sig" },
};
const REFUNDED = {
  error: {
    type: "api_error",
    code: "creator_error",
    message: "the agent failed",
    request_id: "r",
    refund_transaction: "refund_sig",
    execution: { ...EXECUTION, status: "refunded", charge: { ...EXECUTION.charge, amount_usdc: "0.000000", charged_usdc: "0.000000", returned_usdc: "0.010000" } },
  },
};

const text = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

describe("agent-market mcp: spending limits", () => {
  let api: Server;
  let outcomes: UnknownOutcomes;
  let execute: (res: ServerResponse) => void;
  const logged: string[] = [];
  afterEach(async () => {
    outcomes?.stop();
    await api?.close();
  });

  async function contexts(total_usdc: bigint, sessions: number): Promise<ToolCallContext[]> {
    api = await serve((request, _raw, res) => {
      if (request.method === "GET" && request.url.startsWith(`/v1/agents/${AGENT}`)) return json(res, 200, LISTING);
      if (request.method === "POST" && request.url === `/v1/agents/${AGENT}/execute`) return execute(res);
      json(res, 404, { error: { type: "not_found_error", code: "route_not_found", message: "no", request_id: "r" } });
    });
    const client = new AgentMarket({ apiKey: "svc_test_k", baseUrl: api.url, timeoutMs: 300, maxRetries: 0 });
    const catalog = new AgentCatalog(client, { network: "devnet", agents: [AGENT] }, 1_000_000n);
    await catalog.refresh();
    outcomes = new UnknownOutcomes(client, 100, (line) => logged.push(line));
    const process_limit = new SpendingLimit(total_usdc);
    return Array.from({ length: sessions }, () => ({
      client,
      catalog,
      max_price_usdc: 1_000_000n,
      network: "devnet" as const,
      session_limit: new SpendingLimit(20_000n),
      process_limit,
      outcomes,
    }));
  }

  const tool = (context: ToolCallContext) => context.catalog.tools()[0]!.definition.name;
  const executes = () => api.requests.filter((request) => request.method === "POST");

  it("refuses a new session's call once the process's limit is spent, nothing sent", async () => {
    execute = (res) => json(res, 200, EXECUTION);
    const [one, two, three] = await contexts(20_000n, 3);
    assert.ok(!(await callTool(one!, tool(one!), { task: "a" })).isError);
    assert.ok(!(await callTool(two!, tool(two!), { task: "b" })).isError);
    const refused = await callTool(three!, tool(three!), { task: "c" });
    assert.equal(refused.isError, true);
    assert.equal(
      text(refused),
      "This call costs 0.010000 USDC; this server may spend 0.000000 USDC more of its 0.020000 USDC limit for all sessions together. Nothing was charged.",
    );
    assert.equal(executes().length, 2, "the refused call was never sent");
    assert.equal(three!.session_limit.remaining_usdc(), 20_000n, "the session's own reservation was given back");
  });

  it("keeps a timed-out call's reservation until its final state is read: charged, it stays spent", async () => {
    let answer = false;
    execute = (res) => {
      if (answer) json(res, 200, EXECUTION);
      // Otherwise no answer: the client's timeout ends the call, its outcome unknown.
    };
    const [one, two] = await contexts(20_000n, 2);
    const unknown = await callTool(one!, tool(one!), { task: "a" });
    assert.equal(unknown.isError, true);
    assert.equal(
      text(unknown),
      "The outcome of this call to Echo is unknown (timeout): it may have been charged. Its 0.010000 USDC stays reserved against this server's limits until the server reads its final state; do not repeat it yet.",
    );
    assert.equal(one!.process_limit.held_usdc(), 10_000n);
    assert.equal(outcomes.pending(), 1);
    answer = true;
    // Another session may take only what the unknown call left.
    assert.ok(!(await callTool(two!, tool(two!), { task: "b" })).isError);
    assert.match(text(await callTool(two!, tool(two!), { task: "c" })), /this server may spend 0\.000000 USDC more/);
    await until(() => outcomes.pending() === 0 && one!.process_limit.held_usdc() === 0n);
    assert.equal(one!.process_limit.remaining_usdc(), 0n, "the call was charged: its price stays spent");
    const [first, ...later] = executes();
    const replay = later.find((request) => request.headers["idempotency-key"] === first!.headers["idempotency-key"]);
    assert.ok(replay, "asked again with the same key");
    assert.deepEqual(replay.body, first!.body);
  });

  it("gives a timed-out call's reservation back once its final state says it was refunded", async () => {
    let answer = false;
    execute = (res) => {
      if (answer) json(res, 502, REFUNDED);
    };
    const [one] = await contexts(10_000n, 1);
    assert.equal((await callTool(one!, tool(one!), { task: "a" })).isError, true);
    assert.match(text(await callTool(one!, tool(one!), { task: "b" })), /this session may spend 0\.010000 USDC more|this server may spend 0\.000000 USDC more/);
    answer = true;
    await until(() => outcomes.pending() === 0 && one!.process_limit.held_usdc() === 0n);
    assert.equal(one!.process_limit.remaining_usdc(), 10_000n);
    assert.equal(one!.session_limit.remaining_usdc(), 20_000n);
    assert.ok(logged.some((line) => line.endsWith("ended: creator_error, nothing charged")), logged.join("\n"));
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("never happened");
}
