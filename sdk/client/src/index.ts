// @agent-market/client: the consumer's client of the Agent Market API, for browsers and Node.
// Receipt verification, which needs the program's decoders and web3.js, is the separate entry
// "@agent-market/client/verify".
export { AgentMarket, Agents, Executions, newIdempotencyKey, paginate, type AgentMarketOptions } from "./client.js";
export { ExecutionStream } from "./execution-stream.js";
export {
  WalletSession,
  SessionKeys,
  SessionListings,
  SessionWallet,
  type SessionOptions,
  type WalletSigner,
} from "./session.js";
export {
  SessionDisputes,
  type Dispute,
  type DisputeEvidence,
  type DisputeRole,
  type DisputeState,
  type EvidenceAttachmentInput,
  type EvidenceCreated,
} from "./session-disputes.js";
export {
  SessionWebhooks,
  type CreatedWebhookEndpoint,
  type ExecutionCallback,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointCreateParams,
  type WebhookEventType,
} from "./session-webhooks.js";
export {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_TOLERANCE_SECS,
  type VerifyWebhookOptions,
  type WebhookEvent,
} from "./webhook-verify.js";
export {
  AgentMarketError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  ExecutionFailedError,
  InvalidRequestError,
  ListingError,
  NotFoundError,
  PaymentRequiredError,
  PermissionError,
  ServerError,
  StreamInterruptedError,
  type ErrorInit,
  type ErrorObject,
} from "./errors.js";
export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  backoffMs,
  isRetryable,
  type AttemptOutcome,
} from "./http.js";
export { retryAfterMs } from "@agent-market/program/retry-after";
export { callPriceUsdc } from "./pricing.js";
// The shared USDC rules, from the entry that imports nothing (the root would bring Anchor along).
export { formatUsdc, parseUsdc, USDC_DECIMALS } from "@agent-market/program/usdc";
export type * from "./types.js";
export { serverSentEvents, type ServerSentEvent } from "./event-stream.js";
