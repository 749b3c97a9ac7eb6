// The marketplace's side of the calls, for the tests: keys, request bodies and signed POSTs.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";

import { fastify, type FastifyInstance } from "fastify";

import {
  ed25519PublicKey,
  formatAddress,
  formatExecutionId,
  requestHash,
  signRequest,
  toHex,
  type CreatorExecuteRequest,
} from "@agent-market/program";

import { agentServicePlugin } from "../src/fastify.js";
import { createAgentService, type AgentServiceOptions, type ServiceResponse, type ServiceStream } from "../src/index.js";

export const marketplaceSeed = new Uint8Array(32).fill(0x4d);
export const marketplaceKey = formatAddress(ed25519PublicKey(marketplaceSeed));
export const creatorSeed = new Uint8Array(32).fill(0x43);
export const creatorPublicKey = ed25519PublicKey(creatorSeed);
export const strangerSeed = new Uint8Array(32).fill(0x58);
/** The agent account the test services answer for. */
export const servedAgent = formatAddress(new Uint8Array(32).fill(0x41));
/** An agent no test service answers for: a clone of the served one, say. */
export const otherAgent = formatAddress(new Uint8Array(32).fill(0x42));

export const nowSecs = () => Math.floor(Date.now() / 1000);

/** A well-formed request with a fresh execution id, due a minute from now. */
export function executeRequest(
  task: string,
  parameters: Record<string, unknown>,
  overrides: Partial<CreatorExecuteRequest> = {},
): CreatorExecuteRequest {
  return {
    protocol_version: 2,
    execution_id: formatExecutionId(randomBytes(16)),
    agent: servedAgent,
    escrow_nonce: String(randomBytes(4).readUInt32LE()),
    payer: formatAddress(randomBytes(32)),
    payer_token_account: formatAddress(randomBytes(32)),
    amount_usdc: "0.250000",
    network: "devnet",
    task,
    parameters,
    request_hash: toHex(requestHash(task, parameters)),
    deadline: new Date(Date.now() + 60_000).toISOString(),
    ...overrides,
  };
}

/**
 * What `verifyCreatorResponse` checks an answer to `request` against: the request itself (its
 * escrow, a metered request's max_units) and the creator's key.
 */
export function expectedAnswer(request: CreatorExecuteRequest) {
  return { ...request, signing_key: creatorPublicKey };
}

export interface SendOptions {
  method?: string;
  /** The path signed; defaults to the path sent. */
  signedPath?: string;
  timestamp_secs?: number;
  signer?: Uint8Array;
  /** Replaces the signature header; null leaves it out. */
  header?: string | null;
  contentType?: string;
}

export interface Answer {
  status: number;
  contentType: string | null;
  /** The body exactly as received, and parsed. */
  text: string;
  body: any;
}

/** A signed request, prepared once so that it can be sent to several servers as is. */
export interface SignedCall {
  method: string;
  path: string;
  body: string | Uint8Array;
  headers: Record<string, string>;
}

export function signedCall(path: string, body: string | Uint8Array, options: SendOptions = {}): SignedCall {
  const method = options.method ?? "POST";
  const headers: Record<string, string> = { "content-type": options.contentType ?? "application/json" };
  const header =
    options.header !== undefined
      ? options.header
      : signRequest(options.signer ?? marketplaceSeed, {
          method,
          path: options.signedPath ?? path,
          body,
          timestamp_secs: options.timestamp_secs ?? nowSecs(),
        });
  if (header !== null) headers["agentmarket-signature"] = header;
  return { method, path, body, headers };
}

export async function send(baseUrl: string, call: SignedCall): Promise<Answer> {
  const response = await fetch(baseUrl + call.path, {
    method: call.method,
    headers: call.headers,
    body: call.method === "GET" || call.method === "HEAD" ? undefined : call.body,
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    text,
    body: text ? JSON.parse(text) : null,
  };
}

/** Signs and sends `body` (an object is sent as its JSON) to `path`. */
export function post(baseUrl: string, path: string, body: unknown, options: SendOptions = {}): Promise<Answer> {
  const text = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
  return send(baseUrl, signedCall(path, text, options));
}

export function urlOf(server: Server): string {
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

/** The service of `options` behind both transports, for the enclosing `describe`: their URLs once up. */
export function servedOnBothTransports<P>(options: AgentServiceOptions<P>): { nodeUrl: string; fastifyUrl: string } {
  const urls = { nodeUrl: "", fastifyUrl: "" };
  let nodeServer: Server;
  let fastifyApp: FastifyInstance;
  before(async () => {
    nodeServer = await createAgentService(options).listen(0, "127.0.0.1");
    urls.nodeUrl = urlOf(nodeServer);
    // A fetch that hangs up mid-stream may leave a fresh, unused connection behind, which a
    // plain close would wait for.
    fastifyApp = fastify({ forceCloseConnections: true });
    await fastifyApp.register(agentServicePlugin, options);
    urls.fastifyUrl = await fastifyApp.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    nodeServer.closeAllConnections();
    await closeServer(nodeServer);
    await fastifyApp.close();
  });
  return urls;
}

/** A JSON answer of handleExecute (every answer but a streaming handler's to an event-stream request). */
export function jsonAnswer(response: ServiceResponse | ServiceStream): ServiceResponse {
  assert.ok(!("stream" in response), "a JSON answer, not a stream");
  return response;
}

export interface SseEvent {
  event: string;
  data: any;
}

/** The SSE events of a response body, each as soon as its blank line arrives. */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n\n")) !== -1) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const lines = block.split("\n").filter((line) => !line.startsWith(":"));
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7) ?? "message";
      const data = lines.find((line) => line.startsWith("data: "))?.slice(6);
      if (data !== undefined) yield { event, data: JSON.parse(data) };
    }
  }
}

/** Sends a signed call asking for a stream; the response, its body not yet read. */
export function postForStream(baseUrl: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  const call = signedCall("/execute", JSON.stringify(body));
  return fetch(baseUrl + call.path, {
    method: "POST",
    headers: { ...call.headers, accept: "text/event-stream, application/json" },
    body: call.body,
    signal,
  });
}
