// MCP over Streamable HTTP at /mcp: one server and one session limit per session (the session id
// the initialize answer sets). Every session spends from this process's API key, so each request
// passes the RequestGuard first, the sessions held at once are bounded, and a session left idle
// (a client that went away without DELETE) is closed so that it frees its place.
import { randomUUID } from "node:crypto";
import http from "node:http";

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

import { RequestGuard, type GuardOptions } from "./request-guard.js";

export const MAX_SESSIONS = 32;
const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpOptions extends Omit<GuardOptions, "listen_host"> {
  host: string;
  port: number;
  /** A session without a request for this long, and none running, is closed. */
  idle_ms: number;
  newSession(): Server;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  last_request_ms: number;
  /** Requests not yet answered (an open event stream counts until it closes). */
  open_requests: number;
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

/** Counts `req` as running on `session` until its answer is done or its connection closes. */
function track(session: Session, res: http.ServerResponse): void {
  session.last_request_ms = Date.now();
  session.open_requests += 1;
  res.once("close", () => {
    session.open_requests -= 1;
    session.last_request_ms = Date.now();
  });
}

export async function serveHttp(options: HttpOptions): Promise<RunningHttp> {
  const guard = new RequestGuard({ ...options, listen_host: options.host });
  const sessions = new Map<string, Session>();
  const expireIdle = async () => {
    const now_ms = Date.now();
    for (const [id, session] of sessions) {
      if (session.open_requests > 0 || now_ms - session.last_request_ms < options.idle_ms) continue;
      sessions.delete(id);
      await session.transport.close().catch(() => undefined);
    }
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Before anything else, so a refused caller learns nothing of the paths or the sessions.
    const refusal = guard.check(req.headers);
    if (refusal) return reject(res, refusal.status, refusal.message);
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") return reject(res, 404, "not found: the MCP endpoint is /mcp");
    const id = req.headers["mcp-session-id"];
    const session = typeof id === "string" ? sessions.get(id) : undefined;
    if (session) track(session, res);
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
    if (sessions.size >= MAX_SESSIONS) await expireIdle();
    if (sessions.size >= MAX_SESSIONS) return reject(res, 503, `at most ${MAX_SESSIONS} sessions at once`);
    const server = options.newSession();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        const opened: Session = { transport, server, last_request_ms: Date.now(), open_requests: 0 };
        sessions.set(sessionId, opened);
        track(opened, res);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const sweep = setInterval(() => void expireIdle(), Math.max(100, Math.min(options.idle_ms / 2, 60_000)));
  sweep.unref();
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
      clearInterval(sweep);
      for (const session of sessions.values()) await session.transport.close().catch(() => undefined);
      listener.closeAllConnections();
      await new Promise((resolve) => listener.close(resolve));
    },
  };
}
