// An agent's tool call that streams, through a real MCP client and server over an in-memory
// transport, against a stand-in API: a client that gave a progressToken gets one progress
// notification per piece of the output as it arrives, then the whole output as the result; one
// that did not is answered as before, without a stream; a refund mid-stream is a tool error.
import { strict as assert } from "node:assert";
import type { ServerResponse } from "node:http";

import { AgentMarket } from "@agent-market/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";

import { AgentCatalog } from "../src/mcp/agent-catalog.js";
import { createSessionServer } from "../src/mcp/mcp-server.js";
import { SpendingLimit } from "../src/mcp/spending-limit.js";
import { UnknownOutcomes } from "../src/mcp/unknown-outcomes.js";
import { FIXED_CHARGE, json, serve, type Server } from "./helpers.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";
const LISTING = {
  object: "agent",
  id: AGENT,
  name: "Words",
  description: "Writes words.",
  status: "active",
  tags: [],
  pricing: { model: "pay_per_use", price_usdc: "0.250000" },
  input_schema: { type: "object" },
  output_schema: { type: "string" },
};
const RUNNING = { object: "execution", id: "exec_1", status: "running", output: null };
const SUCCEEDED = { ...RUNNING, status: "succeeded", output: "once upon a time", charge: FIXED_CHARGE, receipt: null, transactions: { settlement: "sig" } };
const PIECES = ["once ", "upon ", "a time"];

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const text = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

describe("agent-market mcp: a streamed tool call", () => {
  let api: Server;
  let outcomes: UnknownOutcomes;
  let client: Client;
  afterEach(async () => {
    outcomes?.stop();
    await client?.close();
    await api?.close();
  });

  /** A session's server and its client; `ending` is the stream's last event. */
  async function session(ending: (res: ServerResponse) => void = (res) => send(res, "completed", SUCCEEDED)): Promise<string> {
    api = await serve((request, _raw, res) => {
      if (request.method === "GET" && request.url.startsWith(`/v1/agents/${AGENT}`)) return json(res, 200, LISTING);
      if (request.method !== "POST") return json(res, 404, { error: { type: "not_found_error", code: "no", message: "no", request_id: "r" } });
      if (request.headers.accept !== "text/event-stream") return json(res, 200, SUCCEEDED);
      res.writeHead(200, { "content-type": "text/event-stream" });
      send(res, "execution", RUNNING);
      PIECES.forEach((piece, seq) => send(res, "output", { seq, text: piece }));
      ending(res);
      res.end();
    });
    const market = new AgentMarket({ apiKey: "svc_test_k", baseUrl: api.url, maxRetries: 0 });
    const catalog = new AgentCatalog(market, { network: "devnet", agents: [AGENT] }, 1_000_000n);
    await catalog.refresh();
    outcomes = new UnknownOutcomes(market, 100, () => {});
    const server = createSessionServer({
      client: market,
      catalog,
      process_limit: new SpendingLimit(10_000_000n),
      outcomes,
      max_price_usdc: 1_000_000n,
      network: "devnet",
      session_limit_usdc: 10_000_000n,
      version: "test",
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: "test", version: "1" });
    await client.connect(clientSide);
    return catalog.tools()[0]!.definition.name;
  }

  it("reports each piece of the output as progress, in order, then answers the whole output", async () => {
    const tool = await session();
    const notes: Progress[] = [];
    const result = (await client.callTool({ name: tool, arguments: { task: "tell" } }, CallToolResultSchema, {
      onprogress: (progress) => notes.push(progress),
    })) as CallToolResult;
    assert.deepEqual(
      notes.map((note) => [note.progress, note.message]),
      PIECES.map((piece, i) => [i + 1, piece]),
    );
    assert.equal(result.isError, undefined);
    assert.equal(result.structuredContent?.output, "once upon a time");
    assert.match(text(result), /^"once upon a time"\n\nCharged 0.250000 USDC/);
    assert.equal(api.requests.find((r) => r.method === "POST")!.headers.accept, "text/event-stream");
  });

  it("runs a call without a progressToken as before: no stream asked for", async () => {
    const tool = await session();
    const result = (await client.callTool({ name: tool, arguments: { task: "tell" } })) as CallToolResult;
    assert.equal(result.structuredContent?.output, "once upon a time");
    assert.notEqual(api.requests.find((r) => r.method === "POST")!.headers.accept, "text/event-stream");
  });

  it("answers a refund after the pieces that arrived as a tool error saying it was refunded", async () => {
    const tool = await session((res) =>
      send(res, "refunded", {
        code: "invalid_output",
        message: "the output does not match the output schema",
        refund_reason: "invalid_output",
        refund_transaction: "refund_sig",
        execution: { ...RUNNING, status: "refunded" },
      }),
    );
    const notes: Progress[] = [];
    const result = (await client.callTool({ name: tool, arguments: { task: "tell" } }, CallToolResultSchema, {
      onprogress: (progress) => notes.push(progress),
    })) as CallToolResult;
    assert.equal(notes.length, 3);
    assert.equal(result.isError, true);
    assert.match(text(result), /Words failed: the output does not match the output schema \(invalid_output, execution exec_1\)\. The escrow was refunded \(transaction refund_sig\)\./);
  });

  it("keeps a call whose stream ended early reserved as of unknown outcome, and asks for it again", async () => {
    const tool = await session((res) => send(res, "error", { code: "stream_buffer_exceeded", message: "the reader was too slow" }));
    const result = (await client.callTool({ name: tool, arguments: { task: "tell" } }, CallToolResultSchema, {
      onprogress: () => {},
    })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(text(result), /outcome of this call to Words is unknown \(stream_buffer_exceeded\)/);
    assert.equal(outcomes.pending(), 1);
    // The same request is asked again with its Idempotency-Key (answered JSON: its final state).
    const posts = () => api.requests.filter((r) => r.method === "POST");
    for (let waited = 0; posts().length < 2 && waited < 3000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    const [first, again] = posts();
    assert.equal(again!.headers["idempotency-key"], first!.headers["idempotency-key"]);
  });
});
