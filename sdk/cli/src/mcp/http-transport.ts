// MCP over Streamable HTTP at /mcp: one server and one budget per session (the session id the
// initialize answer sets). Every session spends from this process's API key, so beyond the
// loopback interface a bearer token is required, and the sessions held at once are bounded.
import { randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export const MAX_SESSIONS = 32;
const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpOptions {
  host: string;
  port: number;
  /** Required from clients as `Authorization: Bearer …` when set. */
  token?: string;
  newSession(): Server;
}

export interface RunningHttp {
  url: string;
  servers(): Server[];
  close(): Promise<void>;
}

function reject(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

function authorized(req: http.IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = Buffer.from(req.headers.authorization ?? "");
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export async function serveHttp(options: HttpOptions): Promise<RunningHttp> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") return reject(res, 404, "not found: the MCP endpoint is /mcp");
    if (!authorized(req, options.token)) return reject(res, 401, "unauthorized: send Authorization: Bearer <token>");
    const id = req.headers["mcp-session-id"];
    const session = typeof id === "string" ? sessions.get(id) : undefined;
    if (req.method !== "POST") {
      if (!session) return reject(res, 404, "unknown session");
      return session.transport.handleRequest(req, res);
    }
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return reject(res, 400, "the body must be JSON of at most 1 MiB");
    }
    if (session) return session.transport.handleRequest(req, res, body);
    if (id !== undefined || !isInitializeRequest(body)) return reject(res, 404, "unknown session: initialize first");
    if (sessions.size >= MAX_SESSIONS) return reject(res, 503, `at most ${MAX_SESSIONS} sessions at once`);
    const server = options.newSession();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const listener = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reject(res, 500, "internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject_) => {
    listener.once("error", reject_);
    listener.listen(options.port, options.host, () => resolve());
  });
  const address = listener.address() as { port: number };
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${address.port}/mcp`,
    servers: () => [...sessions.values()].map((session) => session.server),
    async close() {
      for (const session of sessions.values()) await session.transport.close().catch(() => undefined);
      listener.closeAllConnections();
      await new Promise((resolve) => listener.close(resolve));
    },
  };
}
