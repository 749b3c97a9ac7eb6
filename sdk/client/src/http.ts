// One JSON call to the API, with the retry rule of docs/sdk.md:
//
// - Only a request that is safe to send twice is ever retried: a GET, or an execute carrying an
//   Idempotency-Key (a repeat of the key is a replay of the first call, never a second charge).
// - Retried: no answer at all (network failure, the client's timeout), 503, 409
//   idempotency_request_in_progress, and 502/504 that carry no execution (a gateway's failure:
//   the relayer may never have seen the call).
// - Never retried: 502/504 with an execution (the creator failed and the escrow was refunded: a
//   final outcome, which a replay would only repeat), 503 agent_circuit_open (the agent failed
//   too often: its cool-off is a minute, and the caller decides whether to wait), 429 (the
//   caller's own calls in flight, or the agent's), and every other 4xx and 5xx.
//
// The wait before retry n (0, 1, …) is Retry-After when the answer has one, else 500 ms × 2^n
// (at most 8 s) scaled by a random 50–100 %, so clients that failed together do not come back
// together.
import { retryAfterMs } from "@agent-market/program/retry-after";

import { ConnectionError, ServerError, errorFromResponse, type AgentMarketError } from "./errors.js";

export interface TransportOptions {
  /** The API's origin, e.g. https://api.agentmarket.example (paths start with /v1). */
  baseUrl: string;
  fetch?: typeof fetch;
  /** Retries after the first attempt; 0 turns them off. */
  maxRetries?: number;
  /** Per attempt. */
  timeoutMs?: number;
  /** The Authorization header value, if any. */
  authorization?: string;
}

export interface ApiRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Starts with /v1/. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Whether sending it twice is harmless: a GET, or a POST with an Idempotency-Key. */
  replayable: boolean;
  signal?: AbortSignal | undefined;
}

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * A 2xx answer in `text/event-stream`, to a request that accepts one: its body's bytes as they
 * arrive. The attempt's timeout then counts the silence between reads (the API sends a keep-alive
 * every 15 s), so a stream lasts as long as what it streams does.
 */
export interface StreamResponse {
  status: number;
  headers: Headers;
  /** Throws ConnectionError when the connection breaks or stays silent, the abort reason when the caller aborts. */
  bytes: AsyncIterable<Uint8Array>;
}

const EVENT_STREAM = /^\s*text\/event-stream\s*(;|$)/i;

export const DEFAULT_MAX_RETRIES = 2;
/** Long enough for a synchronous execution of an agent allowed a few minutes; use async for longer. */
export const DEFAULT_TIMEOUT_MS = 300_000;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

/** What one attempt came to, for the retry decision. */
export type AttemptOutcome =
  | { kind: "no_answer" }
  | { kind: "answer"; status: number; code: string | undefined; hasExecution: boolean };

/** The retry rule above, for a request that may (`replayable`) or may not be sent twice. */
export function isRetryable(outcome: AttemptOutcome, replayable: boolean): boolean {
  if (!replayable) return false;
  if (outcome.kind === "no_answer") return true;
  if (outcome.status === 409) return outcome.code === "idempotency_request_in_progress";
  if (outcome.status === 503) return outcome.code !== "agent_circuit_open";
  if (outcome.status === 502 || outcome.status === 504) return !outcome.hasExecution;
  return false;
}

export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling_ms = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry);
  return Math.round(ceiling_ms * (0.5 + random() / 2));
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** fetch rejects with "fetch failed" and the reason (ECONNREFUSED, ENOTFOUND…) as its cause. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}

/** A body's chunks; `arm` restarts the silence timer at each, `release` ends the attempt. */
async function* readBytes(
  body: ReadableStream<Uint8Array> | null,
  read: (reader: ReadableStreamDefaultReader<Uint8Array>) => Promise<{ done: boolean; value?: Uint8Array }>,
  arm: () => void,
  release: () => void,
): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body?.getReader();
  try {
    for (arm(); reader; arm()) {
      const { done, value } = await read(reader);
      if (done || value === undefined) return;
      yield value;
    }
  } finally {
    release();
    // Stops the download when the reader stops early (at the final event, or on an error).
    reader?.cancel().catch(() => undefined);
  }
}

export class Transport {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly authorization: string | undefined;

  constructor(options: TransportOptions) {
    if (typeof options.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError("baseUrl must be an http(s) URL");
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    // Called unbound, a browser's fetch throws "Illegal invocation".
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!(Number.isInteger(this.maxRetries) && this.maxRetries >= 0)) throw new RangeError("maxRetries must be an integer ≥ 0");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError("timeoutMs must be > 0");
    this.authorization = options.authorization;
  }

  url(path: string, query: ApiRequest["query"] = {}): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ""}`;
  }

  async request<T>(request: ApiRequest): Promise<ApiResponse<T>> {
    const answer = await this.send(request, false);
    return answer.response as ApiResponse<T>;
  }

  /**
   * A request whose 2xx answer may be an event stream (the caller's headers ask for one); any
   * other answer is read as `request` reads it, so an error is thrown before anything streams.
   * Retried by the same rule, and only until a stream starts.
   */
  requestStream(request: ApiRequest): Promise<{ response: ApiResponse<unknown> } | { stream: StreamResponse }> {
    return this.send(request, true);
  }

  private async send(request: ApiRequest, streams: true): Promise<{ response: ApiResponse<unknown> } | { stream: StreamResponse }>;
  private async send(request: ApiRequest, streams: false): Promise<{ response: ApiResponse<unknown> }>;
  private async send(request: ApiRequest, streams: boolean): Promise<{ response: ApiResponse<unknown> } | { stream: StreamResponse }> {
    for (let retry = 0; ; retry++) {
      const result = await this.attempt(request, streams);
      if (!("error" in result)) return result;
      const { error } = result;
      const outcome: AttemptOutcome =
        error instanceof ConnectionError
          ? { kind: "no_answer" }
          : { kind: "answer", status: error.status!, code: error.code, hasExecution: "execution" in error.details };
      if (retry >= this.maxRetries || !isRetryable(outcome, request.replayable)) throw error;
      await sleep(result.retry_after_ms ?? backoffMs(retry), request.signal);
    }
  }

  private connectionError(cause: unknown, timedOut: boolean, streaming: boolean): ConnectionError {
    return new ConnectionError({
      status: undefined,
      code: timedOut ? "timeout" : "connection_error",
      type: "connection_error",
      message: streaming
        ? timedOut
          ? `the stream from ${this.baseUrl} was silent for ${this.timeoutMs} ms`
          : `the stream from ${this.baseUrl} broke: ${describe(cause)}`
        : timedOut
          ? `no answer from ${this.baseUrl} within ${this.timeoutMs} ms`
          : `could not reach ${this.baseUrl}: ${describe(cause)}`,
      cause,
    });
  }

  /** One attempt; throws only when the caller aborted. */
  private async attempt(
    request: ApiRequest,
    streams: boolean,
  ): Promise<{ response: ApiResponse<unknown> } | { stream: StreamResponse } | { error: AgentMarketError; retry_after_ms: number | null }> {
    const headers: Record<string, string> = { accept: "application/json", ...request.headers };
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    if (request.body !== undefined) headers["content-type"] = "application/json";
    const controller = new AbortController();
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.timeoutMs);
    };
    const onAbort = () => controller.abort(request.signal!.reason);
    const release = () => {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
    };
    arm();
    if (request.signal?.aborted) onAbort();
    request.signal?.addEventListener("abort", onAbort, { once: true });
    let response: Response;
    let text: string;
    // A stream's body outlives this function: the reader of its bytes releases the timer and listener.
    let handedOver = false;
    try {
      response = await this.fetchImpl(this.url(request.path, request.query), {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: controller.signal,
      });
      if (streams && response.ok && EVENT_STREAM.test(response.headers.get("content-type") ?? "")) {
        handedOver = true;
        const read = async (reader: ReadableStreamDefaultReader<Uint8Array>) => {
          try {
            return await reader.read();
          } catch (cause) {
            if (request.signal?.aborted) throw abortError(request.signal);
            throw this.connectionError(cause, timedOut, true);
          }
        };
        const bytes = readBytes(response.body, read, arm, release);
        return { stream: { status: response.status, headers: response.headers, bytes } };
      }
      text = await response.text();
    } catch (cause) {
      if (request.signal?.aborted) throw abortError(request.signal);
      return { error: this.connectionError(cause, timedOut, false), retry_after_ms: null };
    } finally {
      if (!handedOver) release();
    }
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.ok) {
      if (body === undefined) {
        const error = new ServerError({
          status: response.status,
          code: "invalid_response",
          type: "api_error",
          message: `the API answered ${response.status} with a body that is not JSON`,
          requestId: response.headers.get("request-id") ?? undefined,
        });
        return { error, retry_after_ms: null };
      }
      return { response: { status: response.status, body, headers: response.headers } };
    }
    return {
      error: errorFromResponse(response.status, body, response.headers.get("request-id")),
      retry_after_ms: retryAfterMs(response.headers.get("retry-after")),
    };
  }
}
