// Builds the relayer's services from its configuration; the one place that wires them together.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { NetworkName } from "@agent-market/program";
import { createLogger, createPool } from "@agent-market/service";

import { ApiKeyAuthenticator, ApiKeyStore } from "./auth/api-keys.js";
import { WebRunKeys } from "./auth/web-run-keys.js";
import { ExpiredSignInPurge, PURGE_INTERVAL_MS } from "./auth/expired-purge.js";
import { EVIDENCE_GRACE_SECS, EVIDENCE_PURGE_INTERVAL_MS, EvidencePurge } from "./disputes/evidence-purge.js";
import { SignInService } from "./auth/sign-in.js";
import { WalletConfirmations } from "./auth/wallet-confirmations.js";
import type { Services } from "./app-services.js";
import { ChainService } from "./chain/chain-service.js";
import type { RelayerConfig } from "./config.js";
import { reconcile, type ReconcileReport } from "./executions/reconcile.js";
import { CreatorClient } from "./creator/creator-client.js";
import { OpenBatches } from "./executions/open-batches.js";
import { AgentActivity } from "./executions/agent-activity.js";
import { RefundBatches } from "./executions/refund-batches.js";
import { SettleBatches } from "./executions/settle-batches.js";
import { migrate } from "./db/database.js";
import { IndexerClient } from "./indexer/indexer-client.js";
import { CircuitBreaker } from "./listings/circuit-breaker.js";
import { Discovery } from "./listings/discovery.js";
import { ListingService } from "./listings/listing-service.js";
import { PriorityFees } from "./chain/priority-fee.js";
import { TransactionSender } from "./chain/tx-sender.js";
import { LookupTables } from "./chain/lookup-tables.js";
import { ExecutionReads } from "./executions/execution-reads.js";
import { ExecutionRecovery } from "./executions/execution-recovery.js";
import { ExecutionRunner } from "./executions/execution-run.js";
import { ExecutionLeases } from "./executions/execution-leases.js";
import { ExecutionService } from "./executions/execution-service.js";
import { ExecutionStore } from "./executions/execution-store.js";
import { Quoter } from "./executions/quote.js";
import { SubscriptionService } from "./executions/subscription-service.js";
import { DisputeService } from "./disputes/dispute-service.js";
import { BullMqJobQueue } from "./jobs/bullmq-queue.js";
import type { JobQueue } from "./jobs/job-queue.js";
import { LocalJobQueue } from "./jobs/local-queue.js";
import { retryLog } from "./jobs/retry-log.js";
import { WebhookEndpoints } from "./webhooks/webhook-endpoints.js";
import { WEBHOOK_WORKER_DEFAULTS, WebhookWorker } from "./webhooks/webhook-worker.js";

export interface RunningServices extends Services {
  /** Compares the database with the chain (see executions/reconcile.ts). */
  reconcile(network: NetworkName): Promise<ReconcileReport>;
  /** Starts the background jobs and this instance's heartbeat. */
  startWorkers(): Promise<void>;
  /** Gives this instance's unfinished executions to the finish job (see main.ts, shutdown). */
  handOverExecutions(): Promise<number>;
  close(): Promise<void>;
}

export async function createServices(config: RelayerConfig): Promise<RunningServices> {
  const db = createPool(config.database_url, { max_connections: 20, prepare_statements: config.database_prepared_statements, custom_plans: config.database_prepared_statements });
  await migrate(db);
  const chain = new ChainService(config.networks);
  const senders = Object.fromEntries(
    chain.networks.map((network) => [network, new TransactionSender(
        chain.rpc(network),
        config.networks[network]!.relayer_keypair,
        chain.programId(network),
        new PriorityFees(chain.rpc(network), config.priority_fee),
      )]),
  );
  // The services' own lines go where the HTTP server's go (fastify's pino writes to stdout).
  const logger = createLogger(config.log_level, process.stdout);
  const logRetry = retryLog(logger);
  const jobs: JobQueue = config.redis_url
    ? new BullMqJobQueue(config.redis_url, config.queue_name, undefined, logRetry)
    : new LocalJobQueue(db, undefined, logRetry);
  const authenticator = new ApiKeyAuthenticator(db, config.api_key_hash_secret);
  const creators = new CreatorClient(config.networks, config.endpoint_policy);
  const listings = new ListingService(db, chain, creators, config);
  const instance_id = `relayer-${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
  const store = new ExecutionStore(db);
  const quoter = new Quoter(chain, listings);
  const leases = new ExecutionLeases(db, {
    per_key: config.executions_in_flight_per_key,
    per_agent: config.executions_in_flight_per_agent,
  });
  const breaker = new CircuitBreaker(db, {
    failures: config.circuit_breaker_failures,
    window_secs: config.circuit_breaker_window_secs,
    cooloff_secs: config.circuit_breaker_cooloff_secs,
  });
  // The batchers gather by the agents' calls in progress, and load each agent's fixed accounts
  // from its lookup table (v0 transactions) once it exists.
  const activity = new AgentActivity();
  const batching = {
    gather_ms: config.batch_gather_ms,
    activity,
    ...(config.lookup_tables ? { tables: new LookupTables(db, chain, senders) } : {}),
  };
  const runner = new ExecutionRunner(store, chain, senders, listings, creators, jobs, {
    instance_id,
    creator_max_response_bytes: config.creator_max_response_bytes,
    breaker,
    leases,
    activity,
    settle_batches: new SettleBatches(store, chain, senders, creators, batching),
    ...(config.batch_opens ? { open_batches: new OpenBatches(store, chain, senders, batching) } : {}),
    ...(config.batch_refunds ? { refund_batches: new RefundBatches(store, chain, senders, batching) } : {}),
  });
  const executions = new ExecutionService(
    db,
    chain,
    senders,
    quoter,
    store,
    runner,
    jobs,
    instance_id,
    { leases, breaker, listings },
  );
  const subscriptions = new SubscriptionService(db, chain, senders, quoter, jobs, listings);
  const recovery = new ExecutionRecovery(db, store, runner, subscriptions, chain, senders, jobs, {
    instance_id,
    instance_timeout_secs: config.instance_timeout_secs,
  });
  const disputes = new DisputeService(db, chain, store);
  const evidencePurge = new EvidencePurge(db, chain, {
    interval_ms: EVIDENCE_PURGE_INTERVAL_MS,
    grace_secs: EVIDENCE_GRACE_SECS,
    onError: (error) => logger.error({ err: error }, "purge of dispute evidence files failed"),
  });
  const purge = new ExpiredSignInPurge(db, {
    interval_ms: PURGE_INTERVAL_MS,
    onError: (error) => logger.error({ err: error }, "purge of expired sign-in nonces and sessions failed"),
  });
  const webhookWorker = new WebhookWorker(db, { ...WEBHOOK_WORKER_DEFAULTS, policy: config.endpoint_policy });
  let workers = false;
  return {
    config,
    db,
    chain,
    authenticator,
    keys: new ApiKeyStore(db, config.api_key_hash_secret),
    webRunKeys: new WebRunKeys(db),
    signIn: new SignInService(db, {
      domain: config.public_url.host,
      uri: config.public_url.origin,
      nonce_ttl_secs: config.nonce_ttl_secs,
      session_ttl_secs: config.session_ttl_secs,
    }),
    confirmations: new WalletConfirmations(db, { domain: config.public_url.host, uri: config.public_url.origin, nonce_ttl_secs: config.nonce_ttl_secs }),
    listings,
    discovery: new Discovery(
      listings,
      new IndexerClient(config.networks, (network, error) =>
        logger.warn({ err: error }, `the ${network} indexer did not answer; listings show no figures`),
      ),
    ),
    executions,
    executionReads: new ExecutionReads(db),
    subscriptions,
    jobs,
    disputes,
    webhooks: new WebhookEndpoints(db, config.endpoint_policy),
    reconcile: (network) => reconcile(db, chain, senders, network),
    async startWorkers() {
      workers = true;
      await recovery.startInstance();
      purge.start();
      evidencePurge.start();
      webhookWorker.start();
      await jobs.start({
        finish: (id) => recovery.finish(id),
        finish_purchase: (id) => subscriptions.finish(id),
        execute: (id) => recovery.execute(id),
        async sweep() {
          await Promise.all([recovery.sweep(), disputes.watch()]);
        },
      });
    },
    handOverExecutions: () => recovery.handOverOwned(),
    async close() {
      purge.stop();
      evidencePurge.stop();
      leases.close();
      await runner.close();
      await jobs.close();
      await webhookWorker.close();
      if (workers) recovery.stopInstance();
      await authenticator.flushUsage().catch(() => undefined);
      await db.end();
      chain.close();
    },
  };
}
