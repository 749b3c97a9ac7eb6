// `POST /execute`, `POST /sign-batch` and `GET /health` over plain node:http.
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";

import { errorResponse, type ServiceResponse } from "./responses.js";
import type { AgentServiceCore, ExecuteHttpRequest } from "./service.js";
import type { ServiceStream } from "./stream.js";

type PostRoute = (core: AgentServiceCore, request: ExecuteHttpRequest) => Promise<ServiceResponse | ServiceStream>;

const POST_ROUTES: Record<string, PostRoute> = {
  "/execute": (core, request) => core.handleExecute(request),
  "/sign-batch": (core, request) => core.handleSignBatch(request),
};

/** Writes `response` as JSON; the fastify plugin writes the same bytes and headers. */
function sendJson(res: ServerResponse, response: ServiceResponse, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(response.body);
  res.writeHead(response.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
}

/**
 * Writes a streamed answer's frames as they come, each flushed at once (no proxy buffering either),
 * waiting out backpressure; stops when the marketplace hangs up. The fastify plugin writes it too.
 */
export async function writeEventStream(res: ServerResponse, response: ServiceStream): Promise<void> {
  res.writeHead(response.status, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  for await (const frame of response.stream) {
    // Hung up: the frames' generator ends here, and the handler's signal has fired.
    if (res.destroyed) break;
    if (!res.write(frame)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
  }
  if (!res.destroyed) res.end();
}

/** The body, or null once it grows past `max_bytes` (then the rest is drained, not kept). */
function readBody(req: IncomingMessage, max_bytes: number): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const declared_bytes = Number(req.headers["content-length"]);
    if (declared_bytes > max_bytes) {
      req.resume();
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let received_bytes = 0;
    const onData = (chunk: Buffer) => {
      received_bytes += chunk.length;
      if (received_bytes > max_bytes) {
        req.off("data", onData);
        req.resume();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(new Uint8Array(Buffer.concat(chunks))));
    req.once("error", reject);
  });
}

async function serve(core: AgentServiceCore, basePath: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // The signature covers the path as sent, base included: only the routing drops the base.
  const path = req.url ?? "/";
  const full = path.split("?", 1)[0]!;
  const pathname = full.startsWith(`${basePath}/`) ? full.slice(basePath.length) : undefined;
  if (pathname === "/health") {
    if (req.method === "GET") sendJson(res, core.health());
    else sendJson(res, errorResponse(405, "method_not_allowed", "use GET /health"), { allow: "GET" });
    return;
  }
  const route = pathname !== undefined && Object.hasOwn(POST_ROUTES, pathname) ? POST_ROUTES[pathname] : undefined;
  if (route === undefined) {
    const message = `this service answers POST ${basePath}/execute, POST ${basePath}/sign-batch and GET ${basePath}/health`;
    sendJson(res, errorResponse(404, "not_found", message));
    return;
  }
  if (req.method !== "POST") {
    sendJson(res, errorResponse(405, "method_not_allowed", `use POST ${pathname}`), { allow: "POST" });
    return;
  }
  const body = await readBody(req, core.maxBodyBytes);
  if (body === null) {
    // Closing the connection spares receiving the rest of an oversized upload.
    sendJson(res, errorResponse(413, "payload_too_large", `the body is larger than ${core.maxBodyBytes} bytes`), {
      connection: "close",
    });
    return;
  }
  const hangUp = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) hangUp.abort();
  });
  const response = await route(core, {
    method: req.method,
    path,
    headers: req.headers,
    body,
    signal: hangUp.signal,
  });
  if (res.destroyed) return;
  if ("stream" in response) await writeEventStream(res, response);
  else sendJson(res, response);
}

export interface NodeListenerOptions {
  /**
   * The path the service is mounted under, as in its listed endpoint (`/agents/a1` for the
   * endpoint `https://host/agents/a1`): it then answers `${basePath}/execute` and the like.
   */
  basePath?: string;
}

/** A node:http request listener for `core`. */
export function nodeListener(core: AgentServiceCore, options: NodeListenerOptions = {}): RequestListener {
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  if (basePath !== "" && !basePath.startsWith("/")) throw new Error(`basePath must start with "/": ${options.basePath}`);
  return (req, res) => {
    serve(core, basePath, req, res).catch(() => {
      // The routes never throw, so this is reading the body failing: answer if anyone listens.
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, errorResponse(400, "invalid_request", "the request could not be read"));
      }
    });
  };
}
