// The consumer's client: discovery, executions paid from the API key's wallet, and their
// history. Only global fetch and Web APIs, so it runs in browsers, Node, Deno and workers alike.
import { ExecutionStream } from "./execution-stream.js";
import { Transport } from "./http.js";
import type { ExecutionCallback } from "./session-webhooks.js";
import type {
  Agent,
  AgentListParams,
  ExecuteInput,
  ExecuteOptions,
  ExecuteStreamOptions,
  Execution,
  ExecutionListParams,
  Marketplace,
  Network,
  Page,
  RequestOptions,
  SubscriptionPurchase,
  WhoAmI,
} from "./types.js";

export interface AgentMarketOptions {
  /** `svc_test_…` (devnet) or `svc_live_…` (mainnet). Listings and the marketplace read without one. */
  apiKey?: string;
  /** The API's origin, e.g. https://api.agentmarket.example; the client adds /v1/…. */
  baseUrl: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Retries of a retryable failure after the first attempt (default 2). */
  maxRetries?: number;
  /** Per attempt (default 300 000). */
  timeoutMs?: number;
}

/** Walks a list from `params.starting_after` to its end, one page per step. */
export async function* paginate<T extends { id: string }, P extends { starting_after?: string }>(
  fetchPage: (params: P) => Promise<Page<T>>,
  params: P,
): AsyncGenerator<Page<T>, void, undefined> {
  let cursor = params.starting_after;
  for (;;) {
    const page = await fetchPage(cursor === undefined ? params : { ...params, starting_after: cursor });
    yield page;
    const last = page.data[page.data.length - 1];
    if (!page.has_more || last === undefined) return;
    cursor = last.id;
  }
}

/** 128 random bits, hex: unique per logical call, so that only that call's retries share it. */
export function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return `idem_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const segment = (id: string) => encodeURIComponent(id);

/** An execute's body, streamed or not. */
function executeBody(input: ExecuteInput, options: ExecuteStreamOptions): Record<string, unknown> {
  return {
    task: input.task,
    parameters: input.parameters,
    ...(options.maxPriceUsdc === undefined ? {} : { max_price_usdc: options.maxPriceUsdc }),
  };
}

export class Agents {
  constructor(private readonly transport: Transport) {}

  async list(params: AgentListParams = {}, options: RequestOptions = {}): Promise<Page<Agent>> {
    const { body } = await this.transport.request<Page<Agent>>({
      method: "GET",
      path: "/v1/agents",
      query: { ...params },
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  /** Every page of the listings matching `params`, newest first. */
  pages(params: AgentListParams = {}): AsyncGenerator<Page<Agent>, void, undefined> {
    return paginate((p) => this.list(p), params);
  }

  async get(agentId: string, params: { network?: Network } = {}, options: RequestOptions = {}): Promise<Agent> {
    const { body } = await this.transport.request<Agent>({
      method: "GET",
      path: `/v1/agents/${segment(agentId)}`,
      query: { ...params },
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  /**
   * Runs the agent, paid from the API key's wallet through an on-chain escrow. Resolves with the
   * succeeded execution (or, with `async`, the pending one); rejects with PaymentRequiredError
   * before any funds move, or ExecutionFailedError once the escrow was refunded.
   */
  async execute(agentId: string, input: ExecuteInput, options: ExecuteOptions = {}): Promise<Execution> {
    const headers: Record<string, string> = { "idempotency-key": options.idempotencyKey ?? newIdempotencyKey() };
    if (options.async) headers.prefer = "respond-async";
    const { body } = await this.transport.request<Execution>({
      method: "POST",
      path: `/v1/agents/${segment(agentId)}/execute`,
      body: {
        ...executeBody(input, options),
        ...(options.callbackUrl === undefined ? {} : { callback_url: options.callbackUrl }),
      },
      headers,
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  /**
   * Runs the agent as execute does, with its output streamed as the creator produces it: iterate
   * the answer for the chunks, then await its `result`, the final execution. Everything refused
   * before the escrow opens (PaymentRequiredError, ConflictError, …) is thrown here, as execute
   * throws it, and retried by the same rule until the stream starts; once it has, a refund or an
   * interrupted stream rejects `result` (and ends the iteration) instead. `signal` stops reading
   * (not the execution, which the API finishes anyway).
   */
  async executeStream(agentId: string, input: ExecuteInput, options: ExecuteStreamOptions = {}): Promise<ExecutionStream> {
    const answer = await this.transport.requestStream({
      method: "POST",
      path: `/v1/agents/${segment(agentId)}/execute`,
      body: executeBody(input, options),
      headers: { accept: "text/event-stream", "idempotency-key": options.idempotencyKey ?? newIdempotencyKey() },
      replayable: true,
      signal: options.signal,
    });
    return "stream" in answer ? ExecutionStream.fromEvents(answer.stream) : ExecutionStream.fromExecution(answer.response.body as Execution);
  }
  /**
   * Buys one period of the agent's subscription or hybrid plan from the API key's wallet. Pass an
   * idempotency key to retry safely: a replay returns the first purchase and never pays twice.
   * `maxPriceUsdc`, the period price shown: a higher one is refused before anything is sent.
   */
  async subscribe(
    agentId: string,
    options: { idempotencyKey?: string; maxPriceUsdc?: string } & RequestOptions = {},
  ): Promise<SubscriptionPurchase> {
    const { body } = await this.transport.request<SubscriptionPurchase>({
      method: "POST",
      path: `/v1/agents/${segment(agentId)}/subscription`,
      ...(options.maxPriceUsdc === undefined ? {} : { body: { max_price_usdc: options.maxPriceUsdc } }),
      headers: { "idempotency-key": options.idempotencyKey ?? newIdempotencyKey() },
      replayable: true,
      signal: options.signal,
    });
    return body;
  }
}

export class Executions {
  constructor(private readonly transport: Transport) {}

  /** The callback an async execution named (callbackUrl), and its delivery once the execution is final. */
  async callback(executionId: string, options: RequestOptions = {}): Promise<ExecutionCallback> {
    const { body } = await this.transport.request<ExecutionCallback>({
      method: "GET",
      path: `/v1/executions/${segment(executionId)}/callback`,
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  async get(executionId: string, options: RequestOptions = {}): Promise<Execution> {
    const { body } = await this.transport.request<Execution>({
      method: "GET",
      path: `/v1/executions/${segment(executionId)}`,
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  /** The wallet's executions (through any of its keys), newest first. */
  async list(params: ExecutionListParams = {}, options: RequestOptions = {}): Promise<Page<Execution>> {
    const { body } = await this.transport.request<Page<Execution>>({
      method: "GET",
      path: "/v1/executions",
      query: { ...params },
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  pages(params: ExecutionListParams = {}): AsyncGenerator<Page<Execution>, void, undefined> {
    return paginate((p) => this.list(p), params);
  }
}

export class AgentMarket {
  readonly agents: Agents;
  readonly executions: Executions;
  private readonly transport: Transport;

  constructor(options: AgentMarketOptions) {
    const { apiKey, ...transportOptions } = options;
    this.transport = new Transport({
      ...transportOptions,
      authorization: apiKey === undefined ? undefined : `Bearer ${apiKey}`,
    });
    this.agents = new Agents(this.transport);
    this.executions = new Executions(this.transport);
  }

  /** The wallet and network the API key bills. */
  async whoami(options: RequestOptions = {}): Promise<WhoAmI> {
    const { body } = await this.transport.request<WhoAmI>({
      method: "GET",
      path: "/v1/whoami",
      replayable: true,
      signal: options.signal,
    });
    return body;
  }

  /** Networks, USDC mints, the fee and the key that signs requests to creators. */
  async marketplace(options: RequestOptions = {}): Promise<Marketplace> {
    const { body } = await this.transport.request<Marketplace>({
      method: "GET",
      path: "/v1/marketplace",
      replayable: true,
      signal: options.signal,
    });
    return body;
  }
}
