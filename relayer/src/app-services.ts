// The services every route is given: a leaf, so routes depend on it and never on the app.
import type { ApiKeyAuthenticator, ApiKeyStore } from "./auth/api-keys.js";
import type { SignInService } from "./auth/sign-in.js";
import type { WalletConfirmations } from "./auth/wallet-confirmations.js";
import type { WebRunKeys } from "./auth/web-run-keys.js";
import type { ChainService } from "./chain/chain-service.js";
import type { RelayerConfig } from "./config.js";
import type { Db } from "./db/database.js";
import type { DisputeService } from "./disputes/dispute-service.js";
import type { ExecutionReads } from "./executions/execution-reads.js";
import type { ExecutionService } from "./executions/execution-service.js";
import type { SubscriptionService } from "./executions/subscription-service.js";
import type { JobQueue } from "./jobs/job-queue.js";
import type { Discovery } from "./listings/discovery.js";
import type { ListingService } from "./listings/listing-service.js";
import type { WebhookEndpoints } from "./webhooks/webhook-endpoints.js";

export interface Services {
  config: RelayerConfig;
  db: Db;
  keys: ApiKeyStore;
  authenticator: ApiKeyAuthenticator;
  /** The keys web runs are charged through, one per wallet and environment, never exposed. */
  webRunKeys: WebRunKeys;
  signIn: SignInService;
  /** Fresh wallet signatures over the changes a session alone may not make. */
  confirmations: WalletConfirmations;
  chain: ChainService;
  listings: ListingService;
  /** Listings with the indexer's status and figures, for GET /v1/agents and /v1/agents/:agent_id. */
  discovery: Discovery;
  executions: ExecutionService;
  executionReads: ExecutionReads;
  subscriptions: SubscriptionService;
  jobs: JobQueue;
  /** Dispute evidence and state (POST /v1/disputes/evidence, GET /v1/disputes…). */
  disputes: DisputeService;
  /** The wallet's webhook endpoints and their deliveries (/v1/webhooks…). */
  webhooks: WebhookEndpoints;
}
