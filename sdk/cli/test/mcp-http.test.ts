// The MCP server's HTTP transport refuses what a DNS-rebinding page sends (403 before any session
// exists), asks every request for the bearer token, and closes sessions left idle so that clients
// which never said DELETE do not hold every place.
import { strict as assert } from "node:assert";
import http from "node:http";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { MAX_SESSIONS, serveHttp, type HttpOptions, type RunningHttp } from "../src/mcp/http-transport.js";

const TOKEN = "test-token-0123456789";
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

interface Raw {
  status: number;
  body: string;
}

/** One POST with exactly these headers (fetch would not let a test choose Host). */
function post(url: URL, headers: Record<string, string>, body: unknown): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("agent-market mcp --http: who may talk to it", () => {
  let running: RunningHttp | undefined;
  let sessions_opened = 0;
  let paid_calls = 0;
  const clients: Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await running?.close();
    running = undefined;
  });

  /** A server whose one tool stands for a paid call: it counts. */
  function newSession(): Server {
    sessions_opened += 1;
    const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "pay", inputSchema: { type: "object" } }] }));
    server.setRequestHandler(CallToolRequestSchema, () => {
      paid_calls += 1;
      return { content: [{ type: "text", text: "paid" }] };
    });
    return server;
  }

  async function start(options: Partial<HttpOptions> = {}): Promise<URL> {
    sessions_opened = 0;
    paid_calls = 0;
    running = await serveHttp({ host: "127.0.0.1", port: 0, token: TOKEN, allowed_hosts: [], allowed_origins: [], idle_ms: 600_000, newSession, ...options });
    return new URL(running.url);
  }

  async function connect(url: URL, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }): Promise<Client> {
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  it("answers a DNS-rebinding request (its Host and Origin the attacker's) 403, before any session opens, token or not", async () => {
    const url = await start();
    const foreign = { host: `evil.example:${url.port}`, origin: `http://evil.example:${url.port}` };
    const refused = await post(url, foreign, INITIALIZE);
    assert.equal(refused.status, 403);
    assert.deepEqual(JSON.parse(refused.body), {
      jsonrpc: "2.0",
      error: { code: -32000, message: `forbidden: Host evil.example:${url.port} is not an address this server listens on (--allow-host adds a name)` },
      id: null,
    });
    const withToken = await post(url, { ...foreign, authorization: `Bearer ${TOKEN}` }, INITIALIZE);
    assert.equal(withToken.status, 403);
    const foreignOrigin = await post(url, { host: url.host, origin: "http://evil.example", authorization: `Bearer ${TOKEN}` }, INITIALIZE);
    assert.equal(foreignOrigin.status, 403);
    assert.equal(
      (JSON.parse(foreignOrigin.body) as { error: { message: string } }).error.message,
      "forbidden: Origin http://evil.example is not allowed (--allow-origin allows one)",
    );
    const wrongPath = await post(new URL("/other", url), foreign, INITIALIZE);
    assert.equal(wrongPath.status, 403, "a refused caller learns nothing of the paths");
    assert.equal(sessions_opened, 0);
    assert.equal(paid_calls, 0);
  });

  it("asks every request for the bearer token, on loopback too: 401 without it or with another", async () => {
    const url = await start();
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${TOKEN}x`, TOKEN]) {
      const answer = await post(url, { host: url.host, ...(authorization ? { authorization } : {}) }, INITIALIZE);
      assert.equal(answer.status, 401, String(authorization));
      assert.match(answer.body, /unauthorized: send Authorization: Bearer <token>/);
    }
    assert.equal(sessions_opened, 0);
    const client = await connect(url);
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ["pay"]);
    assert.equal(sessions_opened, 1);
  });

  it("serves localhost and --allow-host names, and an Origin only when --allow-origin names it", async () => {
    const url = await start({ allowed_hosts: ["mcp.internal"], allowed_origins: ["https://app.example"] });
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const host of [url.host, `localhost:${url.port}`, `MCP.internal:${url.port}`]) {
      assert.equal((await post(url, { ...auth, host }, INITIALIZE)).status, 200, host);
    }
    assert.equal((await post(url, { ...auth, host: url.host, origin: "https://app.example" }, INITIALIZE)).status, 200);
    assert.equal((await post(url, { ...auth, host: url.host, origin: "https://app.example:8443" }, INITIALIZE)).status, 403);
    assert.equal((await post(url, { ...auth, host: `other.internal:${url.port}` }, INITIALIZE)).status, 403);
  });

  it("closes sessions idle past --idle-secs: clients that went away without DELETE do not lock others out", async () => {
    const url = await start({ idle_ms: 2_000 });
    const auth = { host: url.host, authorization: `Bearer ${TOKEN}` };
    // Each an initialize and nothing after: a client that reconnected and left its session behind.
    for (let i = 0; i < MAX_SESSIONS; i += 1) assert.equal((await post(url, auth, INITIALIZE)).status, 200);
    const full = await post(url, auth, INITIALIZE);
    assert.equal(full.status, 503, "none is idle yet");
    assert.match(full.body, /at most 32 sessions at once/);
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    assert.equal(running!.servers().length, 0, "the idle sessions were closed");
    const client = await connect(url);
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ["pay"]);
  });

  it("keeps a session whose client holds its event stream open, however long it is quiet", async () => {
    const url = await start({ idle_ms: 200 });
    const client = await connect(url);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(running!.servers().length, 1);
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ["pay"]);
  });
});
