// The relayer's HTTP client for creator endpoints. Creators choose the URL, so every connection is
// checked against the endpoint policy on the address actually connected to (after DNS, at connect
// time), redirects are returned instead of followed, and one deadline and one size limit bound
// the whole exchange.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { performance } from "node:perf_hooks";
import type { Duplex } from "node:stream";

import { classifyAddress, isAllowedAddress, type EndpointPolicy } from "./ip-policy.js";

export interface GuardedRequestOptions {
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  /** One deadline for DNS, connect, TLS, the request and the whole response body. */
  timeout_ms: number;
  /** Counted while reading; the connection is dropped as soon as it is exceeded. */
  max_response_bytes: number;
  policy: EndpointPolicy;
  signal?: AbortSignal;
  /**
   * Each piece of the body as it arrives, after the status and headers, within the size limit: a
   * streamed answer is read while it is still being written. The whole body is kept all the same.
   */
  on_data?: (chunk: Buffer, response: { status: number; headers: http.IncomingHttpHeaders }) => void;
}

export interface GuardedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The IP actually connected to. */
  remote_address: string;
  elapsed_ms: number;
}

export type OutboundErrorCode =
  | "invalid_url"
  | "address_not_allowed"
  | "connect_failed"
  | "timeout"
  | "response_too_large"
  | "aborted";

export class OutboundError extends Error {
  readonly code: OutboundErrorCode;

  constructor(code: OutboundErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OutboundError";
    this.code = code;
  }
}

// Set from the URL and body only: a caller-supplied Host could disagree with the address and TLS
// name actually used, and a wrong length or transfer-encoding would desynchronise a pooled
// connection for the next request. Identity encoding keeps the size limit on the real bytes.
const MANAGED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "accept-encoding"]);

export async function guardedRequest(options: GuardedRequestOptions): Promise<GuardedResponse> {
  const started = performance.now();
  const { policy, signal, timeout_ms, max_response_bytes } = options;
  if (!Number.isFinite(timeout_ms) || timeout_ms <= 0) {
    throw new RangeError(`timeout_ms must be a positive number, got ${timeout_ms}`);
  }
  if (!Number.isSafeInteger(max_response_bytes) || max_response_bytes < 0) {
    throw new RangeError(`max_response_bytes must be a non-negative integer, got ${max_response_bytes}`);
  }
  const url = parseEndpointUrl(options.url);
  const secure = url.protocol === "https:";
  // Node connects to IP literals without calling the agent's lookup, so they are checked here.
  // The WHATWG parser has already turned 0x7f.1, 2130706433 and 127.1 into 127.0.0.1.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const literal = net.isIP(host) !== 0;
  if (literal && !isAllowedAddress(host, policy)) throw refusal(host, policy);

  const payload = typeof options.body === "string" ? Buffer.from(options.body) : options.body;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (MANAGED_HEADERS.has(name.toLowerCase())) {
      throw new TypeError(`guardedRequest sets the ${name.toLowerCase()} header itself`);
    }
    headers[name.toLowerCase()] = value;
  }
  headers["accept-encoding"] = "identity";
  if (payload !== undefined || options.method === "POST") {
    headers["content-length"] = String(payload?.byteLength ?? 0);
  }
  if (signal?.aborted) throw abortedBy(signal);

  return new Promise<GuardedResponse>((resolve, reject) => {
    const agents = AGENTS[policy];
    const requestOptions = { method: options.method, headers };
    const req = secure
      ? https.request(url, { ...requestOptions, agent: agents.https })
      : http.request(url, { ...requestOptions, agent: agents.http });

    let phase = "waiting for a free connection";
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      return true;
    };
    // Destroying the request destroys its socket, so a failed exchange never returns to the pool.
    // No error is passed on: the rejection carries it, and once a response has fully arrived Node
    // has already detached the socket's error handler, so an error given to destroy() would be
    // thrown as uncaught.
    const fail = (error: OutboundError): void => {
      if (!settle()) return;
      req.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new OutboundError("timeout", `no complete response within ${timeout_ms} ms (timed out ${phase})`)),
      timeout_ms,
    );
    const onAbort = (): void => fail(abortedBy(signal!));
    signal?.addEventListener("abort", onAbort, { once: true });

    req.on("error", (error) => fail(error instanceof OutboundError ? error : connectFailed(error)));
    req.on("socket", (socket) => {
      if (!socket.connecting) {
        phase = "waiting for the response";
        return;
      }
      // Each of these fires once in a new socket's life, so no listener outlives this request.
      phase = literal ? "connecting" : "resolving the host name";
      if (!literal) socket.once("lookup", () => (phase = "connecting"));
      socket.once("connect", () => (phase = secure ? "in the TLS handshake" : "waiting for the response"));
      if (secure) socket.once("secureConnect", () => (phase = "waiting for the response"));
    });
    req.on("response", (res) => {
      phase = "reading the response body";
      const remote_address = res.socket.remoteAddress ?? "";
      res.on("error", (error) => fail(connectFailed(error)));
      // 'close' follows 'end' on every complete response too: the error (and its stack trace) is
      // only made for a truncated one.
      res.on("close", () => {
        if (!settled) fail(new OutboundError("connect_failed", "the connection closed before the response was complete"));
      });
      const declared = Number(res.headers["content-length"]);
      if (declared > max_response_bytes) {
        fail(tooLarge(`the response declares ${declared} bytes`, max_response_bytes));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      const { on_data } = options;
      const head = { status: res.statusCode!, headers: res.headers };
      res.on("data", (chunk: Buffer) => {
        received += chunk.byteLength;
        if (received > max_response_bytes) fail(tooLarge(`more than ${max_response_bytes} bytes arrived`, max_response_bytes));
        else if (!settled) {
          chunks.push(chunk);
          on_data?.(chunk, head);
        }
      });
      res.on("end", () => {
        if (!settle()) return;
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: Buffer.concat(chunks, received),
          remote_address,
          elapsed_ms: Math.round(performance.now() - started),
        });
      });
    });
    req.end(payload);
  });
}

/** Destroys every pooled and in-use socket of the guarded agents, e.g. on shutdown. */
export function closeGuardedAgents(): void {
  for (const agents of Object.values(AGENTS)) {
    agents.http.destroy();
    agents.https.destroy();
  }
}

function parseEndpointUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundError("invalid_url", "the endpoint is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OutboundError("invalid_url", `the endpoint scheme ${url.protocol} is not http: or https:`);
  }
  // The message leaves the URL out so the credentials are not copied into logs.
  if (url.username !== "" || url.password !== "") {
    throw new OutboundError("invalid_url", "the endpoint URL must not contain credentials");
  }
  return url;
}

/**
 * An address the URL names itself is repeated, with its class; of a name, only that it is not
 * allowed: whether it resolved, and to which class of address, would map the relayer's network
 * (its resolver sees internal names) for whoever submitted the URL.
 */
function refusal(address: string, policy: EndpointPolicy): OutboundError {
  return new OutboundError("address_not_allowed", `${address} (${classifyAddress(address)}) is not allowed by the ${policy} endpoint policy`);
}

function nameRefusal(policy: EndpointPolicy, hostname: string, cause?: Error): OutboundError {
  return new OutboundError("address_not_allowed", `${hostname} is not allowed by the ${policy} endpoint policy`, cause ? { cause } : undefined);
}

function connectFailed(error: Error): OutboundError {
  // The code alone (ECONNREFUSED…): Node's messages name the resolved address and port. Happy
  // Eyeballs reports an AggregateError, whose message is empty anyway; its code is not.
  const detail = (error as NodeJS.ErrnoException).code || error.name;
  return new OutboundError("connect_failed", `connection failed: ${detail}`, { cause: error });
}

function tooLarge(detail: string, limit: number): OutboundError {
  return new OutboundError("response_too_large", `${detail}; the limit is ${limit} bytes`);
}

function abortedBy(signal: AbortSignal): OutboundError {
  return new OutboundError("aborted", "the request was aborted by the caller", { cause: signal.reason });
}

function guardedLookup(policy: EndpointPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      // Not resolving is answered as a refusal, word for word: otherwise the two answers together
      // tell a caller which names the relayer's resolver knows.
      if (error) {
        callback(nameRefusal(policy, hostname, error), []);
        return;
      }
      // Refuse the name outright rather than connecting to its allowed addresses only: a name that
      // mixes public and internal addresses is misconfigured or a rebinding attempt, and filtering
      // would make the outcome depend on record order and Happy Eyeballs racing.
      if (addresses.some((a) => !isAllowedAddress(a.address, policy))) {
        callback(nameRefusal(policy, hostname), []);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(nameRefusal(policy, hostname), []);
      } else if (options.all) {
        callback(null, addresses);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

// Defence in depth: the lookup vetted resolved names and guardedRequest vetted literals, but the
// peer a socket actually connected to is what matters, and checking it costs nothing per request
// since it happens once per connection. Prepended so it runs before any queued write is flushed.
function checkOnConnect(stream: Duplex | null | undefined, policy: EndpointPolicy): Duplex | null | undefined {
  // Node's http and https agents always create a net.Socket (tls.TLSSocket extends it).
  const socket = stream as net.Socket;
  socket.prependOnceListener("connect", () => {
    const address = socket.remoteAddress;
    if (address !== undefined && isAllowedAddress(address, policy)) return;
    // The error reaches the request through the socket's 'error' event; a socket with no request
    // attached has no listener, and an unheard 'error' would crash the process.
    if (socket.listenerCount("error") === 0) socket.destroy();
    // Not naming the address: the URL may have named a host, whose addresses are not told.
    else socket.destroy(new OutboundError("address_not_allowed", `the endpoint is not allowed by the ${policy} endpoint policy`));
  });
  return stream;
}

class GuardedHttpAgent extends http.Agent {
  readonly #policy: EndpointPolicy;

  constructor(policy: EndpointPolicy, options: http.AgentOptions) {
    super(options);
    this.#policy = policy;
  }

  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    return checkOnConnect(super.createConnection(options, callback), this.#policy);
  }
}

class GuardedHttpsAgent extends https.Agent {
  readonly #policy: EndpointPolicy;

  constructor(policy: EndpointPolicy, options: https.AgentOptions) {
    super(options);
    this.#policy = policy;
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    return checkOnConnect(super.createConnection(options, callback), this.#policy);
  }
}

// Pooled sockets are reused only for the same host and port, and each was checked when it
// connected. Most recently used first, so surplus idle sockets age out; idle ones are closed
// after a while rather than held open for creators that are rarely called. Servers' own
// Keep-Alive timeout hints shorten that further (Node honours them).
function agentOptions(policy: EndpointPolicy) {
  return {
    keepAlive: true,
    scheduling: "lifo",
    maxSockets: 256,
    maxFreeSockets: 64,
    timeout: 15_000,
    lookup: guardedLookup(policy),
  } satisfies http.AgentOptions;
}

// One pool per policy: the pool key is host and port only, so a loopback socket opened for a
// development call must never be handed to a public one.
const AGENTS: Record<EndpointPolicy, { http: GuardedHttpAgent; https: GuardedHttpsAgent }> = {
  public: {
    http: new GuardedHttpAgent("public", agentOptions("public")),
    https: new GuardedHttpsAgent("public", agentOptions("public")),
  },
  development: {
    http: new GuardedHttpAgent("development", agentOptions("development")),
    https: new GuardedHttpsAgent("development", agentOptions("development")),
  },
};
