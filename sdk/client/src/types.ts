// The API's objects as they travel: snake_case fields, USDC amounts as decimal strings with six
// places ("0.250000"; parseUsdc turns one into base units), times as RFC 3339 strings.
import type { NetworkName } from "@agent-market/program/network";

export type Network = NetworkName;

export interface Page<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}

export interface PageParams {
  /** 1 to 100; the API's default is 20. */
  limit?: number;
  /** The id of the last object of the previous page. */
  starting_after?: string;
}

export type Pricing =
  | { model: "pay_per_use"; price_usdc: string }
  | { model: "subscription"; period_price_usdc: string; period_secs: number }
  | {
      model: "hybrid";
      period_price_usdc: string;
      period_secs: number;
      included_calls: number;
      overage_price_usdc: string;
    };

export type ListingStatus = "active" | "paused" | "retired";

/** A listing; its id is the agent account's address. */
export interface Agent {
  object: "agent";
  id: string;
  network: Network;
  creator: string;
  name: string;
  description: string;
  tags: string[];
  pricing: Pricing;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  endpoint: string;
  signing_key: string;
  max_execution_secs: number;
  collateral_usdc: string;
  minimum_collateral_usdc: string;
  listing_hash: string;
  status: ListingStatus;
  /**
   * Why a paused listing is paused: by its creator, or by the relayer because the agent's account
   * no longer holds the endpoint (`endpoint_changed`) or the pricing and listing hash
   * (`terms_changed`) the listing verified. Null unless paused.
   */
  pause_reason: "creator" | "endpoint_changed" | "terms_changed" | null;
  /** The agent's circuit breaker over the refunds its creator caused. */
  circuit: AgentCircuit;
  created_at: string;
  updated_at: string;
  last_probe: { at: string; latency_ms: number } | null;
}

/**
 * `open`: the agent's creator caused too many refunds lately, and it takes no executions until
 * `retry_at`; `half_open`: one probe call decides; `closed`: it runs as usual.
 */
export interface AgentCircuit {
  state: "closed" | "open" | "half_open";
  opened_at: string | null;
  retry_at: string | null;
}

export interface AgentListParams extends PageParams {
  network?: Network;
  /** Active by default. */
  status?: ListingStatus;
  tag?: string;
  /** Text searched in names and descriptions. */
  q?: string;
}

export type ExecutionStatus = "pending" | "running" | "succeeded" | "refunded" | "failed";

/** What binds the output to the input and to the agent's key; verifyReceipt checks it. */
export interface Receipt {
  execution_id: string;
  agent: string;
  /** Lowercase hex SHA-256 of the canonical JSON of {task, parameters}. */
  request_hash: string;
  /** Lowercase hex SHA-256 of the canonical JSON of the output. */
  result_hash: string;
  /** Lowercase hex of the result digest the creator signed. */
  digest: string;
  /** Lowercase hex Ed25519 signature over the digest. */
  creator_signature: string;
  /** The agent's signing key (base58). */
  creator_public_key: string;
}

export interface Charge {
  amount_usdc: string;
  creator_share_usdc: string;
  fee_usdc: string;
  currency: "USDC";
  covered_by_subscription: boolean;
}

export interface Execution {
  object: "execution";
  /** Only in the answer to an async execute with a callbackUrl: the secret its delivery is signed with. */
  callback_secret?: string;
  id: string;
  agent: string;
  network: Network;
  status: ExecutionStatus;
  api_key_id: string;
  /** The agent's output once succeeded, else null. */
  output: unknown;
  receipt: Receipt | null;
  charge: Charge;
  transactions: {
    escrow: string | null;
    settlement: string | null;
    refund: string | null;
    confirmation: "processed" | "confirmed" | null;
  };
  failure: { code: string; message: string | null; refund_reason: string | null } | null;
  escrow_deadline: string | null;
  created_at: string;
  finished_at: string | null;
  durations_ms: {
    total: number | null;
    escrow: number | null;
    creator: number | null;
    settlement: number | null;
  };
}

export interface ExecutionListParams extends PageParams {
  /** Only the executions of this agent. */
  agent?: string;
}

export interface ExecuteInput {
  task: string;
  parameters: Record<string, unknown>;
}

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

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface WhoAmI {
  object: "api_key_identity";
  key_id: string;
  name: string;
  environment: "test" | "live";
  network: Network;
  wallet: string;
}

export interface MarketplaceNetwork {
  name: Network;
  /** The agent_market program's address on this network; devnet and mainnet may differ. */
  program_id: string;
  key_prefix: string;
  usdc_mint: string;
  treasury: string;
  relayer: string;
  minimum_collateral_usdc: string;
  escrow_grace_secs: number;
  dispute_window_secs: number;
  escrows_paused: boolean;
  /** The key that signs this network's requests to creators (base58); each network has its own. */
  request_signing_key: string;
}

export interface Marketplace {
  object: "marketplace";
  api_version: string;
  /** The first network's program id (devnet's when served); see each network's own. */
  program_id: string;
  fee_bps: number;
  /** The first network's request signing key (devnet's when served); see each network's own. */
  request_signing_key: string;
  networks: MarketplaceNetwork[];
}

export interface ApiKey {
  object: "api_key";
  id: string;
  name: string;
  environment: "test" | "live";
  network: Network;
  wallet: string;
  prefix: "svc_test_" | "svc_live_";
  last4: string;
  status: "active" | "revoked" | "expired";
  created_at: string;
  last_used_at: string | null;
  execution_count: number;
  spent_usdc: string;
  spending_cap_usdc: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** A new key: `secret` is in this answer and nowhere else, ever. */
export interface CreatedApiKey extends ApiKey {
  secret: string;
}

export interface ApiKeyCreateParams {
  name: string;
  environment: "test" | "live";
  spending_cap_usdc?: string;
  /** RFC 3339, in the future. */
  expires_at?: string;
}

export interface Session {
  object: "session";
  id: string;
  wallet: string;
  created_at: string;
  expires_at: string;
}

/** A wallet's web runs on a network: whether its session may run agents, and their cap. */
export interface WebRuns {
  object: "web_runs";
  network: Network;
  key_id: string;
  enabled: boolean;
  spending_cap_usdc: string;
  spent_usdc: string;
  execution_count: number;
  revoked_at: string | null;
}

export interface WalletFunding {
  object: "wallet_funding";
  network: Network;
  wallet: string;
  usdc_mint: string;
  token_account: string;
  token_account_exists: boolean;
  /** The program's delegate the allowance is given to. */
  delegate: string;
  balance_usdc: string;
  allowance_usdc: string;
}

/** A transaction for the wallet to sign (it is the fee payer) and send itself. */
export interface UnsignedTransaction {
  object: "unsigned_transaction";
  network: Network;
  /** Base64 of the serialized legacy transaction, without signatures. */
  transaction: string;
  recent_blockhash: string;
  last_valid_block_height: number;
  amount_usdc: string;
}

export interface ListingFields {
  name: string;
  description: string;
  tags: string[];
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
  endpoint: string;
  /** The agent's registered Ed25519 key (base58). */
  signing_key: string;
  pricing: Pricing;
  /** What the conformance probe sends instead of its own task and parameters built from input_schema. */
  probe?: { task?: string; parameters?: Record<string, unknown> };
}

export interface ListingCreateParams extends ListingFields {
  /** The agent account's address, registered on-chain already. */
  agent: string;
  network?: Network;
}

export type ListingUpdateParams = Partial<ListingFields>;

/**
 * POST /v1/agents/conformance: the listing's probe (the relayer's own task, parameters built from
 * input_schema) for an agent address not registered yet.
 */
export interface ConformanceParams extends Pick<ListingFields, "input_schema" | "output_schema" | "endpoint" | "signing_key"> {
  /** The address register_agent will create. */
  agent: string;
  /**
   * base58 of the signing key's signature over the signing-key proof of `agent` and the session's
   * wallet (`signSigningKeyProof`, `agent-market key-proof`); not needed once the agent is on
   * chain under this wallet with this key.
   */
  key_proof?: string;
  max_execution_secs: number;
  network?: Network;
}

export interface ConformanceResult {
  ok: true;
  latency_ms: number;
}

/** POST /v1/agents/:agent_id/subscription: one period bought (`pending` while it lands). */
export interface SubscriptionPurchase {
  object: "subscription";
  id: string;
  status: "pending" | "succeeded";
  agent: string;
  wallet: string;
  network: Network;
  expires_at: string | null;
  included_calls_remaining: number | null;
  charge: { amount_usdc: string; creator_share_usdc: string; fee_usdc: string; currency: "USDC" };
  transaction: string;
}
