// An indexer for one network: migrations applied, the writer (ingestion) started, and the
// GraphQL server built. main.ts listens; tests use `yoga.fetch` and `store` directly.
import { createLogger, createPool, type Logger, type Pool } from "@agent-market/service";

import { ChangeFeed } from "./change-feed.js";
import type { IndexerConfig } from "./config.js";
import { migrate } from "./db/migrate.js";
import { SolanaRpc } from "./ingest/rpc.js";
import { EventStore } from "./ingest/store.js";
import { Writer, type WriterOptions } from "./ingest/writer.js";
import { SubscriptionSlots } from "./graphql/subscription-slots.js";
import { buildYoga, type IndexerYoga } from "./yoga.js";

export interface Indexer {
  config: IndexerConfig;
  pool: Pool;
  feed: ChangeFeed;
  store: EventStore;
  rpc: SolanaRpc;
  writer: Writer;
  yoga: IndexerYoga;
  /** Open GraphQL subscriptions, bounded by the configuration. */
  subscriptions: SubscriptionSlots;
  close(): Promise<void>;
}

export interface IndexerOptions extends WriterOptions {
  logger?: Logger;
  /** Start ingesting (the default); off for a server that only answers queries. */
  ingest?: boolean;
  nowSecs?: () => number;
}

export async function createIndexer(config: IndexerConfig, options: IndexerOptions = {}): Promise<Indexer> {
  const logger = options.logger ?? createLogger(config.log_level);
  const pool = createPool(config.database_url);
  await migrate(pool, config.schema);
  const store = new EventStore(pool, config.schema, config.program_id);
  const feed = new ChangeFeed(config.database_url, config.schema, logger);
  await feed.start();
  store.onCommit((notices) => feed.noteCommit(notices));
  const rpc = new SolanaRpc(config.rpc_url, { calls_per_second: config.rpc_calls_per_second });
  const writer = new Writer(config, pool, rpc, store, logger, options);
  if (options.ingest !== false) writer.start();
  const subscriptions = new SubscriptionSlots({ total: config.max_subscriptions, perClient: config.max_subscriptions_per_client });
  const yoga = buildYoga({
    pool,
    feed,
    schema: config.schema,
    network: config.network,
    production: config.production,
    store,
    rpc,
    subscriptions,
    responseCacheMs: config.response_cache_ms,
    heliusWebhookAuth: config.helius_webhook_auth,
    nowSecs: options.nowSecs,
  });
  return {
    config,
    pool,
    feed,
    store,
    rpc,
    writer,
    yoga,
    subscriptions,
    async close() {
      await writer.stop();
      await feed.close();
      await pool.end();
    },
  };
}
