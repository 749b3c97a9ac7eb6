// The creator's side of `POST /execute` and `POST /sign-batch` (docs/execute-protocol.md), each as
// one function of the raw request so that the node:http listener and the fastify plugin answer
// byte for byte alike.
import { createServer, type RequestListener, type Server } from "node:http";

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import {
  DEFAULT_REQUEST_TOLERANCE_SECS,
  ed25519PublicKey,
  formatAddress,
  formatSigningKeyProof,
  parseAddress,
  parseExecuteRequest,
  requestHash,
  signResult,
  signSigningKeyProof,
  toHex,
  type CreatorExecuteResponse,
  type MeteredTerms,
  type WireEscrow,
} from "@agent-market/program";

import { nodeListener } from "./node.js";
import {
  errorResponse,
  type HealthBody,
  type SchemaViolation,
  type ServiceResponse,
} from "./responses.js";
import { ReplayCache } from "./replay-cache.js";
import { requestAuthenticator, type ExecuteHttpRequest } from "./request-auth.js";
import { Metered } from "./metered.js";
import { batchSigner } from "./sign-batch.js";
import { acceptsEventStream, isChunkStream, sseFrame, type ChunkStream, type ServiceStream } from "./stream.js";

export type { ExecuteHttpRequest };

/** A JSON Schema (draft 2020-12) document. */
export type JsonSchema = boolean | { [keyword: string]: unknown };

/** What the handler learns about one execution. */
export interface AgentContext<P = Record<string, unknown>> {
  task: string;
  /** The request's parameters, validated against the input schema, its defaults filled in. */
  parameters: P;
  /** `exec_…`: the id of the escrow that pays for this call. */
  executionId: string;
  /** The agent account's address (base58). */
  agent: string;
  /** "devnet" or "mainnet" (or the marketplace's local network). */
  network: string;
  /** After it the escrow can no longer be settled, so a late result earns nothing. */
  deadline: Date;
  /** Fires at the deadline, or when the marketplace hangs up: stop work and let go of resources. */
  signal: AbortSignal;
  /**
   * A metered call's terms, null for a fixed-price one: the escrow holds the price of `maxUnits`
   * units at `pricePerUnitUsdc` (USDC base units) each. An answer of more units is not signed
   * (the program would refuse to settle it), so a handler stops, or refuses, at `maxUnits`.
   */
  metered: MeteredTerms | null;
}

/**
 * Runs one paid call. A fixed-price agent returns its output; a metered one returns
 * `metered(output, units)`, and the units are answered and signed with it. A streaming agent is an
 * async generator of text chunks (a metered one returns its units from it): streamed to a request
 * that accepts `text/event-stream`, answered as their concatenation, in JSON, to one that does not.
 */
export type AgentHandler<P = Record<string, unknown>, O = unknown> = (
  context: AgentContext<P>,
) => O | Metered<O> | Promise<O | Metered<O>> | ChunkStream;

export interface AgentServiceOptions<P = Record<string, unknown>, O = unknown> {
  /** The agent's registered Ed25519 key: a 32-byte seed or Solana's 64-byte secret key. */
  signingKey: Uint8Array;
  /** The marketplace's request signing key, base58 (`request_signing_key` of GET /v1/marketplace). */
  marketplaceKey: string;
  /**
   * The agent account addresses (base58) this service answers for. A request naming any other
   * agent is refused (403 `agent_not_served`) before any work and without a signature, so no one
   * who registered a copy of this agent with their own payout account is served or paid for it.
   */
  agents: readonly string[];
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  handler: AgentHandler<P, O>;
  /** How far a request's signature timestamp may be from this clock. */
  toleranceSecs?: number;
  /** How many recent signatures, and separately execution ids, are remembered to refuse replays. */
  replayCacheSize?: number;
  maxBodyBytes?: number;
  /** Milliseconds since the Unix epoch, as Date.now. */
  now?: () => number;
  /**
   * Called with what went wrong on the creator's side (a handler that threw, an output that fails
   * its schema); the marketplace only sees the error's message. Defaults to console.error.
   */
  onError?: (error: unknown, executionId: string | undefined) => void;
}

export const DEFAULT_REPLAY_CACHE_SIZE = 10_000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The service without a transport: what the node:http listener and the fastify plugin share. */
export interface AgentServiceCore {
  /** The base58 public key of `signingKey`. */
  readonly publicKey: string;
  readonly maxBodyBytes: number;
  /**
   * Checks, runs and signs one execution; never throws. A streaming handler's answer to a request
   * that accepts `text/event-stream` is a `ServiceStream`, every other answer JSON.
   */
  handleExecute(request: ExecuteHttpRequest): Promise<ServiceResponse | ServiceStream>;
  /**
   * Checks that every item of a batch carries this key's signature of its result, then signs the
   * batch digest that `settle_batch` takes in their place; never throws.
   */
  handleSignBatch(request: ExecuteHttpRequest): Promise<ServiceResponse>;
  /**
   * The signing-key proof (base58 signature) for registering this key as `agent`'s by `creator`:
   * what `register_agent`, or an `update_agent` setting this key, needs (docs/program.md).
   */
  keyProof(agent: string, creator: string): string;
  health(): ServiceResponse<HealthBody>;
}

export interface AgentService extends AgentServiceCore {
  /** node:http listener serving `POST /execute`, `POST /sign-batch` and `GET /health`, to mount in an existing server. */
  readonly handler: RequestListener;
  /**
   * Starts a node:http server with `handler` on `port` (0: any free port) and `host` (default, as
   * node:http: every interface); resolves once it listens.
   */
  listen(port?: number, host?: string): Promise<Server>;
}

// setTimeout fires at once beyond this (about 24.8 days); no live request waits that long.
const MAX_TIMER_MS = 2 ** 31 - 1;
// Keeps an error message from carrying a creator's whole stack of context to the marketplace.
const MAX_ERROR_MESSAGE_CHARS = 500;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function violations(errors: ErrorObject[] | null | undefined): SchemaViolation[] {
  return (errors ?? []).map((e) => ({ path: e.instancePath || "/", message: e.message ?? e.keyword }));
}

function describe(what: string, found: SchemaViolation[]): string {
  return `${what}: ${found.map((v) => `${v.path} ${v.message}`).join("; ")}`;
}

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : message;
}

function compileSchema(ajv: Ajv2020, schema: JsonSchema, which: string): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new TypeError(`the ${which} schema is not a valid JSON Schema 2020-12: ${errorMessage(error)}`);
  }
}

function newAjv(useDefaults: boolean): Ajv2020 {
  // strict: false accepts every keyword a 2020-12 schema may carry (title, examples, x-…).
  const ajv = new Ajv2020({ allErrors: true, strict: false, useDefaults });
  addFormats.default(ajv);
  return ajv;
}

interface ParsedRequest extends WireEscrow {
  network: string;
  task: string;
  parameters: Record<string, unknown>;
  deadline_ms: number;
  metered: MeteredTerms | null;
}

/** The body's fields, or the refusal's code and what is wrong with them. */
function parseRequestBody(body: unknown): ParsedRequest | { code: "invalid_request" | "unsupported_protocol_version"; message: string } {
  const checked = parseExecuteRequest(body);
  if (!checked.ok) {
    return { code: checked.reason === "unsupported_protocol_version" ? "unsupported_protocol_version" : "invalid_request", message: checked.message };
  }
  const { request } = checked;
  if (request.network === "") return { code: "invalid_request", message: "network is not a non-empty string" };
  const deadline_ms = RFC3339.test(request.deadline) ? Date.parse(request.deadline) : NaN;
  if (Number.isNaN(deadline_ms)) return { code: "invalid_request", message: "deadline is not an RFC 3339 date-time" };
  return {
    execution_id: request.execution_id,
    agent: request.agent,
    escrow_nonce: request.escrow_nonce,
    payer: request.payer,
    payer_token_account: request.payer_token_account,
    amount_usdc: request.amount_usdc,
    network: request.network,
    task: request.task,
    parameters: request.parameters,
    request_hash: request.request_hash,
    deadline_ms,
    metered: checked.metered,
  };
}

/**
 * The signing-key proof, base58: `signingKey`'s signature over `signingKeyProofDigest(agent,
 * creator)`, which the program checks before it records the key as `agent`'s for `creator`.
 */
export function keyProof(signingKey: Uint8Array, agent: string, creator: string): string {
  return formatSigningKeyProof(signSigningKeyProof(signingKey, agent, creator));
}

type Outcome = { kind: "output"; output: unknown } | { kind: "error"; error: unknown } | { kind: "aborted" };

export function createAgentService<P = Record<string, unknown>, O = unknown>(
  options: AgentServiceOptions<P, O>,
): AgentService {
  const signingKey = Uint8Array.from(options.signingKey);
  const publicKeyBytes = ed25519PublicKey(signingKey);
  if (signingKey.length === 64 && toHex(signingKey.subarray(32)) !== toHex(publicKeyBytes)) {
    throw new TypeError("signingKey: the public half of the 64-byte secret key does not belong to its seed");
  }
  if (!parseAddress(options.marketplaceKey)) throw new TypeError("marketplaceKey is not a base58 Ed25519 public key");
  const marketplaceKey = options.marketplaceKey;
  if (!Array.isArray(options.agents) || options.agents.length === 0) {
    throw new TypeError("agents must list the agent addresses this service answers for");
  }
  for (const agent of options.agents) {
    if (typeof agent !== "string" || !parseAddress(agent)) throw new TypeError(`agents: ${String(agent)} is not a base58 address`);
  }
  const servedAgents = new Set(options.agents);
  const toleranceSecs = options.toleranceSecs ?? DEFAULT_REQUEST_TOLERANCE_SECS;
  if (!(Number.isFinite(toleranceSecs) && toleranceSecs >= 0)) {
    throw new RangeError("toleranceSecs must be a finite number ≥ 0");
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!(Number.isSafeInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw new RangeError("maxBodyBytes must be a positive integer");
  }
  const now = options.now ?? Date.now;
  const onError =
    options.onError ??
    ((error, executionId) => console.error(`agent service error (${executionId ?? "no execution"}):`, error));
  const replayCacheSize = options.replayCacheSize ?? DEFAULT_REPLAY_CACHE_SIZE;
  const authenticate = requestAuthenticator({ marketplaceKey, toleranceSecs, replayCacheSize, maxBodyBytes, now });
  const seenExecutions = new ReplayCache(replayCacheSize);
  // Defaults fill the handler's parameters only after request_hash was checked against them as sent;
  // the output validator must not touch the output, whose hash is signed.
  const validateInput = compileSchema(newAjv(true), options.inputSchema, "input");
  const validateOutput = compileSchema(newAjv(false), options.outputSchema, "output");
  const publicKey = formatAddress(publicKeyBytes);
  const signBatch = batchSigner({ signingKey, publicKey: publicKeyBytes, servedAgents });

  /**
   * Pulls a streaming handler's chunks, each yielded as it comes, until it ends, throws or the call
   * is aborted; returns the outcome, the concatenation (with a metered handler's units) as output.
   */
  async function* pullChunks(chunks: ChunkStream, aborted: Promise<Outcome>): AsyncGenerator<string, Outcome> {
    let text = "";
    for (;;) {
      const step = await Promise.race([
        chunks.next().then(
          (result) => ({ kind: "step", result }) as const,
          (error: unknown): Outcome => ({ kind: "error", error }),
        ),
        aborted,
      ]);
      if (step.kind === "aborted") {
        // Lets the generator's finally blocks run once it next yields; its answer no longer matters.
        chunks.return?.().catch(() => {});
        return step;
      }
      if (step.kind !== "step") return step;
      const { result } = step;
      if (result.done) {
        const units = result.value;
        if (units === undefined) return { kind: "output", output: text };
        try {
          return { kind: "output", output: Metered.of(text, units) };
        } catch (error) {
          return { kind: "error", error };
        }
      }
      if (typeof result.value !== "string") {
        chunks.return?.().catch(() => {});
        return { kind: "error", error: new TypeError(`the handler yielded a ${typeof result.value}, not a string chunk`) };
      }
      text += result.value;
      yield result.value;
    }
  }

  /** The answer to a finished handler: refused late, its error, or its output checked and signed. */
  function settle(request: ParsedRequest, outcome: Outcome, signal: AbortSignal, clientSignal: AbortSignal | undefined): ServiceResponse {
    // A handler that throws because its signal fired has met the deadline, not a bug.
    if (outcome.kind === "aborted" || signal.aborted || now() >= request.deadline_ms) {
      return clientSignal?.aborted
        ? errorResponse(499, "request_aborted", "the marketplace closed the request")
        : errorResponse(408, "deadline_passed", "the deadline passed before the handler finished");
    }
    if (outcome.kind === "error") {
      onError(outcome.error, request.execution_id);
      return errorResponse(500, "handler_error", errorMessage(outcome.error));
    }
    // A metered handler's units are signed with its output; a fixed-price one answers none (0).
    const { output, units } = outcome.output instanceof Metered ? outcome.output : { output: outcome.output, units: undefined };
    // Signed units above the escrow's maximum could never settle (UnitsAboveMaximum): the call is
    // answered as the creator's failure instead, which the marketplace refunds.
    if (request.metered && units !== undefined && units > request.metered.maxUnits) {
      const message = `the handler answered ${units} units, above the call's max_units ${request.metered.maxUnits}`;
      onError(new RangeError(message), request.execution_id);
      return errorResponse(500, "invalid_output", message);
    }
    if (!validateOutput(output)) {
      const found = violations(validateOutput.errors);
      onError(new Error(describe("output does not match the output schema", found)), request.execution_id);
      const message = describe("the output does not match the output schema", found);
      return errorResponse(500, "invalid_output", message, found);
    }
    try {
      return { status: 200, body: signResult(signingKey, request, output, units) };
    } catch (error) {
      // The schema accepted something that is not JSON data (undefined, a Date, NaN…).
      onError(error, request.execution_id);
      return errorResponse(500, "invalid_output", `the output is not JSON data: ${errorMessage(error)}`);
    }
  }

  async function run(
    request: ParsedRequest,
    clientSignal: AbortSignal | undefined,
    wantsStream: boolean,
  ): Promise<ServiceResponse | ServiceStream> {
    const controller = new AbortController();
    const delay_ms = request.deadline_ms - now();
    const timer =
      delay_ms <= MAX_TIMER_MS ? setTimeout(() => controller.abort(new Error("deadline passed")), delay_ms) : undefined;
    const hangUp = () => controller.abort(new Error("the marketplace closed the request"));
    clientSignal?.addEventListener("abort", hangUp, { once: true });
    if (clientSignal?.aborted) hangUp();
    const release = () => {
      clearTimeout(timer);
      clientSignal?.removeEventListener("abort", hangUp);
    };
    const aborted = new Promise<Outcome>((resolve) => {
      if (controller.signal.aborted) resolve({ kind: "aborted" });
      else controller.signal.addEventListener("abort", () => resolve({ kind: "aborted" }), { once: true });
    });
    const context: AgentContext<P> = {
      task: request.task,
      parameters: request.parameters as P,
      executionId: request.execution_id,
      agent: request.agent,
      network: request.network,
      deadline: new Date(request.deadline_ms),
      signal: controller.signal,
      metered: request.metered,
    };
    // A stream keeps the deadline timer until its last frame; every other answer lets go here.
    let streaming = false;
    try {
      let outcome = await Promise.race([
        Promise.resolve()
          .then(() => options.handler(context))
          .then(
            (output): Outcome => ({ kind: "output", output }),
            (error: unknown): Outcome => ({ kind: "error", error }),
          ),
        aborted,
      ]);
      if (outcome.kind === "output" && isChunkStream(outcome.output)) {
        const chunks = pullChunks(outcome.output, aborted);
        if (wantsStream) {
          streaming = true;
          return { status: 200, stream: streamFrames(request, chunks, controller.signal, clientSignal, release) };
        }
        let step = await chunks.next();
        while (!step.done) step = await chunks.next();
        outcome = step.value;
      }
      return settle(request, outcome, controller.signal, clientSignal);
    } finally {
      if (!streaming) release();
    }
  }

  /**
   * The SSE frames of a streamed answer: an `output` event per chunk as it is yielded, then the
   * `result` signed over their concatenation, or an `error` where JSON would have answered one.
   */
  async function* streamFrames(
    request: ParsedRequest,
    chunks: AsyncGenerator<string, Outcome>,
    signal: AbortSignal,
    clientSignal: AbortSignal | undefined,
    release: () => void,
  ): AsyncGenerator<string> {
    try {
      let seq = 0;
      let step = await chunks.next();
      while (!step.done) {
        yield sseFrame("output", { seq, text: step.value });
        seq += 1;
        step = await chunks.next();
      }
      const answer = settle(request, step.value, signal, clientSignal);
      if ("error" in answer.body) {
        const { code, message } = answer.body.error;
        yield sseFrame("error", { code, message });
        return;
      }
      // The output is the concatenation the caller already has: the result carries its hash only.
      const { output: _sent, ...signed } = answer.body as CreatorExecuteResponse;
      yield sseFrame("result", { ...signed, format: "text" });
    } finally {
      release();
    }
  }

  async function handleExecute(request: ExecuteHttpRequest): Promise<ServiceResponse | ServiceStream> {
    const authenticated = authenticate(request);
    if (!authenticated.ok) return authenticated.response;
    const { now_secs } = authenticated;
    const parsed = parseRequestBody(authenticated.body);
    if ("code" in parsed) return errorResponse(400, parsed.code, parsed.message);
    if (!servedAgents.has(parsed.agent)) {
      return errorResponse(403, "agent_not_served", `this service does not answer for agent ${parsed.agent}`);
    }
    let expectedHash: string;
    try {
      expectedHash = toHex(requestHash(parsed.task, parsed.parameters));
    } catch (error) {
      // JSON escapes can spell a lone surrogate, which has no canonical JSON.
      return errorResponse(400, "invalid_request", `task or parameters have no canonical JSON: ${errorMessage(error)}`);
    }
    if (expectedHash !== parsed.request_hash) {
      return errorResponse(
        400,
        "request_hash_mismatch",
        "request_hash is not SHA-256 of the canonical JSON of {task, parameters}",
      );
    }
    if (!validateInput(parsed.parameters)) {
      const found = violations(validateInput.errors);
      const message = describe("parameters do not match the input schema", found);
      return errorResponse(400, "invalid_parameters", message, found);
    }
    if (parsed.deadline_ms <= now()) return errorResponse(408, "deadline_passed", "the deadline has passed");
    // After the deadline a repeat is refused as late, so the deadline is as long as an id needs remembering.
    if (!seenExecutions.remember(parsed.execution_id, parsed.deadline_ms / 1000, now_secs)) {
      return errorResponse(409, "replayed_request", `execution ${parsed.execution_id} was already received`);
    }
    return run(parsed, request.signal, acceptsEventStream(request.headers.accept));
  }

  const internalError = (error: unknown): ServiceResponse => {
    onError(error, undefined);
    return errorResponse(500, "internal_error", "the service failed to process the request");
  };
  const core: AgentServiceCore = {
    publicKey,
    maxBodyBytes,
    async handleExecute(request) {
      try {
        return await handleExecute(request);
      } catch (error) {
        return internalError(error);
      }
    },
    async handleSignBatch(request) {
      try {
        const authenticated = authenticate(request);
        return authenticated.ok ? signBatch(authenticated.body) : authenticated.response;
      } catch (error) {
        return internalError(error);
      }
    },
    health: () => ({ status: 200, body: { status: "ok", signing_key: publicKey } }),
    keyProof: (agent, creator) => keyProof(signingKey, agent, creator),
  };
  const handler = nodeListener(core);
  return {
    ...core,
    handler,
    listen(port = 0, host) {
      const server = createServer(handler);
      return new Promise<Server>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server);
        });
      });
    },
  };
}
