// `agent-market mcp` against the marketplace `npm start` runs: a real MCP client from the same SDK,
// over stdio and over Streamable HTTP, lists the agents as tools, runs paid calls whose charges are
// on chain, is refused past its limits with nothing charged, and hears of a listing's new schema.
// docs/mcp.md's desktop configuration is started exactly as written, and a DNS-rebinding-shaped
// session is refused.
import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { REPO_ROOT, type LocalMarketplace } from "@agent-market/local";
import { fetchAgent, listingHash, updateAgentInstruction } from "@agent-market/program";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { Connection, Keypair, PublicKey, Transaction, sendAndConfirmTransaction } from "@solana/web3.js";

import { startLocalTestMarket, type LocalTestMarket } from "./src/local-market.js";
import { codeBlock, substitute } from "./src/markdown-blocks.js";
import { api, signIn } from "./src/relayer.js";

const CLI = join(REPO_ROOT, "sdk", "cli", "dist", "main.js");
const ECHO_PRICE = 10_000n;

interface ChargedResult {
  execution_id: string;
  output: unknown;
  charge: { amount_usdc: string };
  transactions: { settlement: string | null };
}

describe("agent-market mcp: the marketplace's agents as MCP tools", function () {
  this.timeout(300_000);
  const home = mkdtempSync(join(tmpdir(), "agent-market-mcp-home-"));
  let local: LocalTestMarket | undefined;
  let marketplace: LocalMarketplace;
  let data_dir: string;
  let connection: Connection;
  let programId: PublicKey;
  let payerToken: PublicKey;
  let echo: string;
  const clients: Client[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    local = await startLocalTestMarket("agent-market-mcp-", { log: () => undefined });
    ({ marketplace, data_dir, connection, programId, payerToken, echo } = local);
  });
  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    for (const child of children) child.kill("SIGTERM");
    await local?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const env = (): Record<string, string> => ({
    PATH: process.env.PATH ?? "",
    AGENT_MARKET_HOME: home,
    AGENT_MARKET_API_URL: marketplace.relayer_url,
    AGENT_MARKET_API_KEY: marketplace.api_key,
  });

  async function overStdio(args: string[]): Promise<Client> {
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", ...args], env: env(), stderr: "ignore" }));
    clients.push(client);
    return client;
  }

  interface HttpServer {
    url: URL;
    token: string;
  }

  /** Starts `agent-market mcp --http 0 …` and resolves with its URL and printed token once it listens. */
  function httpServer(args: string[]): Promise<HttpServer> {
    const child = spawn(process.execPath, [CLI, "mcp", "--http", "0", ...args], { env: env(), stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    return new Promise((resolve, reject) => {
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        const found = /MCP over Streamable HTTP at (\S+)/.exec(stderr);
        const token = /bearer token \(.*\): (\S+)/.exec(stderr);
        if (found && token) resolve({ url: new URL(found[1]!), token: token[1]! });
      });
      child.once("exit", (code) => reject(new Error(`agent-market mcp exited ${code}: ${stderr}`)));
    });
  }

  async function overHttp(server: HttpServer): Promise<Client> {
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers: { authorization: `Bearer ${server.token}` } } }));
    clients.push(client);
    return client;
  }

  const balance = async () => BigInt((await connection.getTokenAccountBalance(payerToken, "confirmed")).value.amount);
  const text = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  const echoTool = (tools: Tool[]) => tools.find((tool) => tool.description?.includes(echo));

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args })) as CallToolResult;
  }

  /** Waits until the settlement is confirmed: the balance it moved is read at `confirmed`. */
  async function settled(result: CallToolResult): Promise<ChargedResult> {
    assert.ok(!result.isError, text(result));
    const charged = result.structuredContent as unknown as ChargedResult;
    assert.ok(charged.transactions.settlement);
    for (let i = 0; i < 100; i += 1) {
      const transaction = await connection.getTransaction(charged.transactions.settlement, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
      if (transaction) {
        assert.equal(transaction.meta?.err, null);
        return charged;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`settlement ${charged.transactions.settlement} never confirmed`);
  }

  it("over stdio: the agent is a tool with its schema and price; a call is charged on chain; past the session's limit, refused with nothing charged", async () => {
    const client = await overStdio(["--agent", echo, "--max-price", "0.05", "--session-limit", "0.025"]);
    const { tools } = await client.listTools();
    const tool = echoTool(tools);
    assert.ok(tool, JSON.stringify(tools.map((t) => t.name)));
    assert.match(tool.name, /^echo_/);
    assert.match(tool.description!, /Price: 0\.010000 USDC per call/);
    assert.deepEqual(tool.inputSchema.required, ["task"]);
    assert.equal((tool.inputSchema.properties!.parameters as { type: string }).type, "object");
    assert.deepEqual(tools.map((t) => t.name).filter((name) => !name.startsWith("echo_")).sort(), ["get_execution", "search_agents"]);

    const before = await balance();
    const first = await settled(await call(client, tool.name, { task: "hello", parameters: { n: 1 } }));
    assert.deepEqual(first.output, { task: "hello", parameters: { n: 1 }, length: 5 });
    assert.equal(first.charge.amount_usdc, "0.010000");
    assert.equal(await balance(), before - ECHO_PRICE, "the charge is on chain");
    await settled(await call(client, tool.name, { task: "again" }));
    assert.equal(await balance(), before - 2n * ECHO_PRICE);

    const refused = await call(client, tool.name, { task: "once more" });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /may spend 0\.005000 USDC more of its 0\.025000 USDC limit\. Nothing was charged\./);
    assert.equal(await balance(), before - 2n * ECHO_PRICE, "nothing charged past the limit");

    const read = await call(client, "get_execution", { execution_id: first.execution_id });
    assert.equal((read.structuredContent as { execution: { id: string; status: string } }).execution.id, first.execution_id);
    const missing = await call(client, "get_execution", { execution_id: "exec_1111111111111111111111" });
    assert.equal(missing.isError, true);
  });

  it("over Streamable HTTP: each session has its own limit; a tool above the per-call maximum is refused, nothing charged; search_agents finds both agents", async () => {
    const server = await httpServer(["--max-price", "0.02", "--session-limit", "0.01", "--total-limit", "0.02"]);
    const one = await overHttp(server);
    const { tools } = await one.listTools();
    const tool = echoTool(tools)!;
    const textStatsAddress = marketplace.agents.find((agent) => agent.slug === "text-stats")!.address;
    const textStats = tools.find((t) => t.description?.includes(textStatsAddress));
    assert.ok(textStats, "every active agent without a selection");
    assert.match(textStats.description!, /Price: 0\.050000 USDC per call.*refuses it/s);

    const before = await balance();
    const expensive = await call(one, textStats.name, { task: "count these words" });
    assert.equal(expensive.isError, true);
    assert.match(text(expensive), /costs 0\.050000 USDC per call, above this server's maximum of 0\.020000 USDC per call\. Nothing was charged\./);
    assert.equal(await balance(), before);

    await settled(await call(one, tool.name, { task: "from session one" }));
    assert.equal((await call(one, tool.name, { task: "past the limit" })).isError, true);
    const two = await overHttp(server);
    await settled(await call(two, tool.name, { task: "from session two" }));
    assert.equal(await balance(), before - 2n * ECHO_PRICE, "one call per session, each charged once");
    const three = await overHttp(server);
    const past = await call(three, tool.name, { task: "a new session, the process's limit spent" });
    assert.equal(past.isError, true);
    assert.equal(
      text(past),
      "This call costs 0.010000 USDC; this server may spend 0.000000 USDC more of its 0.020000 USDC limit for all sessions together. Nothing was charged.",
    );
    assert.equal(await balance(), before - 2n * ECHO_PRICE, "a new session brings no fresh money");

    const found = await call(one, "search_agents", { query: "" });
    const agents = (found.structuredContent as { agents: { id: string; price_usdc: string }[] }).agents;
    assert.equal(agents.find((agent) => agent.id === echo)?.price_usdc, "0.010000");
    // The example agents npm start lists: echo, text statistics, metered text statistics and word stream.
    assert.equal(agents.length, 4);

    const sessionless = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(sessionless.status, 404, "no session without initialize");
  });

  it("answers a 402 as a tool error that says what to do, nothing charged", async () => {
    const wallet = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(join(data_dir, "wallet.json"), "utf8")) as number[]));
    const token = await signIn({ url: marketplace.relayer_url }, wallet);
    const key = await api<{ secret: string }>({ url: marketplace.relayer_url }, "POST", "/v1/keys", {
      token,
      body: { name: "mcp capped", environment: "test", spending_cap_usdc: "0.010000" },
    });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp", "--agent", echo, "--max-price", "0.05", "--session-limit", "1"],
        env: { ...env(), AGENT_MARKET_API_KEY: key.body.secret },
        stderr: "ignore",
      }),
    );
    clients.push(client);
    const tool = echoTool((await client.listTools()).tools)!;
    await settled(await call(client, tool.name, { task: "within the cap" }));
    const before = await balance();
    const refused = await call(client, tool.name, { task: "past the cap" });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /^spending_cap_reached: .* Nothing was charged\. The API key's spending cap is reached: use a key with a higher cap\.$/s);
    assert.equal(await balance(), before);
  });

  /** One POST with exactly these headers (fetch would not let the test choose Host). */
  function rawPost(url: URL, headers: Record<string, string>, body: unknown): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.once("error", reject);
      req.end(JSON.stringify(body));
    });
  }

  it("refuses a DNS-rebinding-shaped session with 403, token or not, and nothing is charged", async () => {
    const server = await httpServer(["--agent", echo, "--max-price", "0.05", "--session-limit", "1", "--total-limit", "1"]);
    const before = await balance();
    const foreign = { host: `evil.example:${server.url.port}`, origin: `http://evil.example:${server.url.port}` };
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } },
    };
    assert.equal(await rawPost(server.url, foreign, initialize), 403);
    assert.equal(await rawPost(server.url, { ...foreign, authorization: `Bearer ${server.token}` }, initialize), 403);
    const tool = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { task: "x" } } };
    assert.equal(await rawPost(server.url, { ...foreign, authorization: `Bearer ${server.token}` }, tool), 403);
    assert.equal(await rawPost(server.url, { host: server.url.host, origin: "http://evil.example", authorization: `Bearer ${server.token}` }, initialize), 403);
    assert.equal(await rawPost(server.url, { host: server.url.host }, initialize), 401);
    assert.equal(await balance(), before, "nothing charged");
  });

  it("on 0.0.0.0 without AGENT_MARKET_MCP_TOKEN, generates a token and asks every request for it", async () => {
    const server = await httpServer(["--host", "0.0.0.0", "--agent", echo, "--max-price", "1", "--session-limit", "1", "--total-limit", "1"]);
    const local = new URL(`http://127.0.0.1:${server.url.port}/mcp`);
    assert.match(server.token, /^[A-Za-z0-9_-]{43}$/);
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(local)));
    const allowed = await overHttp({ url: local, token: server.token });
    assert.ok(echoTool((await allowed.listTools()).tools));
  });

  it("starts from docs/mcp.md's desktop configuration exactly as written, with the API URL as npm start prints it", async () => {
    const written = codeBlock(join(REPO_ROOT, "docs", "mcp.md"), "A desktop client's configuration", "json");
    const config = JSON.parse(
      substitute(written, [
        ["/path/to/agent-market", REPO_ROOT],
        ["svc_test_…", marketplace.api_key],
        ["http://127.0.0.1:8080/v1", `${marketplace.relayer_url}/v1`],
      ]),
    ) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> };
    const server = config.mcpServers["agent-market"]!;
    const client = new Client({ name: "desktop", version: "1.0.0" });
    // As a desktop client does: the command found on PATH, the configured environment.
    const path = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
    await client.connect(
      new StdioClientTransport({ command: server.command, args: server.args, env: { ...server.env, PATH: path, AGENT_MARKET_HOME: home }, stderr: "ignore" }),
    );
    clients.push(client);
    // The tools are the listings read from the API at start: the URL with /v1 reached them.
    const { tools } = await client.listTools();
    const textStatsAddress = marketplace.agents.find((agent) => agent.slug === "text-stats")!.address;
    assert.deepEqual(
      tools.filter((t) => t.description?.includes(textStatsAddress)).map((t) => t.inputSchema.required),
      [["task"]],
      JSON.stringify(tools.map((t) => t.name)),
    );
    const found = await call(client, "search_agents", { tag: "text" });
    assert.deepEqual((found.structuredContent as { agents: { id: string }[] }).agents.map((agent) => agent.id), [textStatsAddress]);
  });

  it("tells the client when the listing's input schema changes (notifications/tools/list_changed), and lists the new schema", async () => {
    const client = await overStdio(["--agent", echo, "--max-price", "0.05", "--session-limit", "1", "--refresh-secs", "1"]);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    const listing = (await api<Record<string, unknown>>({ url: marketplace.relayer_url }, "GET", `/v1/agents/${echo}`)).body;
    const input_schema = {
      type: "object",
      properties: { language: { type: "string", description: "The language of the task." } },
    };
    const document = {
      name: listing.name as string,
      description: listing.description as string,
      tags: listing.tags as string[],
      input_schema,
      output_schema: listing.output_schema as Record<string, unknown>,
    };
    const creator = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(join(data_dir, "creator.json"), "utf8")) as number[]));
    const onChain = (await fetchAgent(connection, new PublicKey(echo), { programId: programId }))!;
    const update = updateAgentInstruction({
      programId: programId,
      creator: creator.publicKey,
      agent: new PublicKey(echo),
      payoutAccount: onChain.payoutAccount,
      terms: { ...onChain, listingHash: listingHash(document) },
    });
    await sendAndConfirmTransaction(connection, new Transaction().add(update), [creator], { commitment: "confirmed" });
    const token = await signIn({ url: marketplace.relayer_url }, creator);
    const patched = await api({ url: marketplace.relayer_url }, "PATCH", `/v1/agents/${echo}`, { token, body: { input_schema } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));

    let parameters: unknown;
    for (let i = 0; i < 150; i += 1) {
      parameters = echoTool((await client.listTools()).tools)?.inputSchema.properties?.parameters;
      if (changes > 0 && JSON.stringify(parameters) === JSON.stringify(input_schema)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(changes > 0, "notifications/tools/list_changed was sent");
    assert.deepEqual(parameters, input_schema);
  });
});
