// The API's objects as they travel: snake_case fields, USDC amounts as decimal strings with six
// places ("0.250000"; parseUsdc turns one into base units), times as RFC 3339 strings. Each is
// taken from generated/openapi.ts, the types of the relayer's OpenAPI document (regenerate with
// `npm run openapi:types -w @agent-market/client`); only what the document cannot say is written here.
import type { NetworkName } from "@agent-market/program/network";

import type { Answer, Body, Query } from "./openapi-access.js";

export type Network = NetworkName;

/** A page of any list: generic, which the document (one schema per route) cannot say. */
export interface Page<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}

export type PageParams = Query<"/v1/keys", "get">;

/** The pricing a listing is created with: one of three models, told apart by `model`. */
export type Pricing = Body<"/v1/agents", "post">["pricing"];

type ListingAnswer = Answer<"/v1/agents", "post", 201>;

export type ListingStatus = ListingAnswer["status"];

/**
 * A listing; its id is the agent account's address. Its pricing is the request's: the answer's
 * schema leaves pricing open so the relayer sends a listing's pricing as stored.
 */
export type Agent = Omit<ListingAnswer, "pricing"> & { pricing: Pricing };

/**
 * `open`: the agent's creator caused too many refunds lately, and it takes no executions until
 * `retry_at`; `half_open`: one probe call decides; `closed`: it runs as usual.
 */
export type AgentCircuit = Agent["circuit"];

export type AgentListParams = Query<"/v1/agents", "get">;

/** The execution as answered by GET /v1/executions/:id, plus the secret only an async execute's 202 carries. */
export type Execution = Answer<"/v1/executions/{execution_id}", "get", 200> &
  Partial<Pick<Answer<"/v1/agents/{agent_id}/execute", "post", 202>, "callback_secret">>;

export type ExecutionStatus = Execution["status"];

/** What binds the output to the input and to the agent's key; verifyReceipt checks it. */
export type Receipt = NonNullable<Execution["receipt"]>;

export type Charge = Execution["charge"];

export type ExecutionListParams = Query<"/v1/executions", "get">;

export type ExecuteInput = Pick<Body<"/v1/agents/{agent_id}/execute", "post">, "task" | "parameters">;

/** The client's own options of an execute (headers and body fields it sets), not a wire object. */
export interface ExecuteOptions {
  /**
   * Makes retries of this call replays: the relayer answers a repeated key with the first call's
   * outcome and never charges twice (keys are kept 48 hours). Generated when left out.
   */
  idempotencyKey?: string;
  /** `Prefer: respond-async`: answer at once with the pending execution, to poll with executions.get. */
  async?: boolean;
  /**
   * The most this call may cost ("0.250000"), the price the caller was shown (callPriceUsdc of
   * the listing's pricing): a call that costs more is refused before anything is sent (409
   * price_above_maximum), and the program never charges more than it.
   */
  maxPriceUsdc?: string;
  /**
   * With `async` only: where the execution's final event is delivered, signed with the
   * `callback_secret` the answer carries (verifyWebhook checks it).
   */
  callbackUrl?: string;
  signal?: AbortSignal;
}

/** executeStream's options: an execute's, but a stream is the synchronous answer, with no callback. */
export type ExecuteStreamOptions = Omit<ExecuteOptions, "async" | "callbackUrl">;

/** A piece of a streamed execution's output, as the creator sent it; the output is their text in order. */
export interface OutputChunk {
  /** 0, 1, 2…: consecutive. */
  seq: number;
  text: string;
}

/** The client's own options of any call, not a wire object. */
export interface RequestOptions {
  signal?: AbortSignal;
}

export type WhoAmI = Answer<"/v1/whoami", "get", 200>;

export type Marketplace = Answer<"/v1/marketplace", "get", 200>;

export type MarketplaceNetwork = Marketplace["networks"][number];

export type ApiKey = Answer<"/v1/keys/{key_id}", "get", 200>;

/** A new key: `secret` is in this answer and nowhere else, ever. */
export type CreatedApiKey = Answer<"/v1/keys", "post", 201>;

export type ApiKeyCreateParams = Body<"/v1/keys", "post">;

export type Session = Answer<"/v1/auth/session", "get", 200>;

/** A wallet's web runs on a network: whether its session may run agents, and their cap. */
export type WebRuns = Answer<"/v1/wallet/web-runs", "get", 200>;

export type WalletFunding = Answer<"/v1/wallet/funding", "get", 200>;

/** A transaction for the wallet to sign (it is the fee payer) and send itself. */
export type UnsignedTransaction = Answer<"/v1/wallet/allowance", "post", 200>;

type ListingCreateBody = Body<"/v1/agents", "post">;

export type ListingFields = Omit<ListingCreateBody, "agent" | "network">;

export type ListingCreateParams = ListingCreateBody;

export type ListingUpdateParams = Body<"/v1/agents/{agent_id}", "patch">;

/**
 * POST /v1/agents/conformance: the listing's probe (the relayer's own task, parameters built from
 * input_schema) for an agent address not registered yet.
 */
export type ConformanceParams = Body<"/v1/agents/conformance", "post">;

export type ConformanceResult = Answer<"/v1/agents/conformance", "post", 200>;

/** POST /v1/agents/:agent_id/subscription: one period bought (`pending` while it lands). */
export type SubscriptionPurchase = Answer<"/v1/agents/{agent_id}/subscription", "post", 200>;
