// The indexer's configuration, read from the environment once at start. Every problem is
// reported together, each naming its variable, so a bad deployment fails before it serves.
import { NETWORK_NAMES, PROGRAM_ID, type NetworkName } from "@agent-market/program";
import { ConfigError, EnvReader, LOG_LEVELS, type Env, type LogLevel } from "@agent-market/service";
import { PublicKey } from "@solana/web3.js";

import { DEFAULT_SUBSCRIPTION_BOUNDS } from "./graphql/subscription-slots.js";

export interface IndexerConfig {
  /** One indexer per network; localnet is indexed as devnet. */
  network: NetworkName;
  /**
   * The agent_market program's address on this network: `DEVNET_PROGRAM_ID` or
   * `MAINNET_PROGRAM_ID` (the relayer's variables, so one environment names it once), required
   * there. On localnet, which loads the program at the IDL's address, `DEVNET_PROGRAM_ID` may be
   * left out and the IDL's address (PROGRAM_ID) is meant.
   */
  program_id: PublicKey;
  /** PostgreSQL schema of this network's tables, e.g. `indexer_devnet`. */
  schema: string;
  database_url: string;
  rpc_url: string;
  websocket_url: string;
  host: string;
  port: number;
  /** Production turns introspection and GraphiQL off. */
  production: boolean;
  /** The value Helius echoes in `Authorization` on each webhook delivery; webhooks are off without it. */
  helius_webhook_auth?: string;
  /** How often the gap check re-reads signatures since the last finalized checkpoint. */
  gap_check_interval_ms: number;
  /** How often confirmed events are checked against the finalized chain. */
  finality_interval_ms: number;
  /** Whether to subscribe to the program's logs (the live source). */
  live: boolean;
  /** Transactions the backfill commits together (with its checkpoint). */
  backfill_batch_size: number;
  /** Open GraphQL subscriptions served at once, in all and from one client address. */
  max_subscriptions: number;
  max_subscriptions_per_client: number;
  /** How long a query's answer is served again while no change arrives; 0 turns the cache off. */
  response_cache_ms: number;
  /** Calls a second the RPC provider allows (each call of a batch counts); 0 for no budget. */
  rpc_calls_per_second: number;
  /** INDEXER_LOG_LEVEL: the least level logged (info by default). */
  log_level: LogLevel;
}

/** Localnet (INDEXER_NETWORK=localnet) loads the program at the IDL's address. */
const LOCALNET_PROGRAM_ID = PROGRAM_ID;

export { ConfigError };

/**
 * `<NETWORK>_PROGRAM_ID` of `network`. Unset, it is a problem: the IDL's address is right on
 * localnet only, and an indexer of a deployment at another id would index nothing. `localnet`
 * says that the chain is a local one, which loads the program at the IDL's address.
 */
export function programIdOf(reader: EnvReader, network: NetworkName, localnet = false): PublicKey {
  const name = `${network.toUpperCase()}_PROGRAM_ID`;
  if (localnet && reader.text(name) === undefined) return LOCALNET_PROGRAM_ID;
  const raw = reader.required(name, `the program's address on ${network}`);
  if (raw === "") return PROGRAM_ID;
  try {
    return new PublicKey(raw);
  } catch {
    reader.problem(`${name} must be the program's base58 address (32 bytes), got "${raw}"`);
    return PROGRAM_ID;
  }
}

/** INDEXER_NETWORK: a network's name, or localnet (a local chain, indexed as devnet). */
export function networkOf(reader: EnvReader): { network: NetworkName; localnet: boolean } {
  const named = reader.choice("INDEXER_NETWORK", "devnet", [...NETWORK_NAMES, "localnet"]);
  return named === "localnet" ? { network: "devnet", localnet: true } : { network: named, localnet: false };
}

/** INDEXER_HELIUS_WEBHOOK_AUTH: the value Helius echoes, long enough not to be guessed. */
export function heliusWebhookAuthOf(reader: EnvReader): string | undefined {
  const auth = reader.text("INDEXER_HELIUS_WEBHOOK_AUTH");
  if (auth !== undefined && auth.length < 16) reader.problem("INDEXER_HELIUS_WEBHOOK_AUTH must be at least 16 characters");
  return auth;
}

/** The websocket URL a JSON-RPC URL implies when none is given: ws(s), port + 1 as localnet serves it. */
function websocketFor(rpcUrl: URL): string {
  const parsed = new URL(rpcUrl.href);
  parsed.protocol = parsed.protocol === "https:" ? "wss:" : "ws:";
  if (parsed.port) parsed.port = String(Number(parsed.port) + 1);
  return parsed.toString();
}

export function parseConfig(env: Env = process.env): IndexerConfig {
  const reader = new EnvReader(env);
  const { network, localnet } = networkOf(reader);
  const database_url = reader.required("INDEXER_DATABASE_URL", "a PostgreSQL connection string (postgres://127.0.0.1:5432/agent_market)");
  if (database_url) reader.url("INDEXER_DATABASE_URL", database_url, ["postgres:", "postgresql:"]);
  const rpc_url = reader.required("INDEXER_RPC_URL", "the network's JSON-RPC URL");
  const rpc = rpc_url ? reader.url("INDEXER_RPC_URL", rpc_url, ["http:", "https:"]) : undefined;
  const websocketUrl = reader.text("INDEXER_WEBSOCKET_URL");
  if (websocketUrl !== undefined) reader.url("INDEXER_WEBSOCKET_URL", websocketUrl, ["ws:", "wss:"]);
  const helius_webhook_auth = heliusWebhookAuthOf(reader);
  const program_id = programIdOf(reader, network, localnet);
  const nodeEnv = reader.text("NODE_ENV") ?? "development";
  // GraphiQL and introspection are off only in production; a mainnet indexer never serves them.
  if (network === "mainnet" && nodeEnv !== "production") {
    reader.problem(`NODE_ENV must be "production" with INDEXER_NETWORK=mainnet (no GraphiQL, no introspection), got "${nodeEnv}"`);
  }
  return reader.finish("indexer", {
    network,
    program_id,
    schema: `indexer_${network}`,
    database_url,
    rpc_url,
    websocket_url: websocketUrl ?? (rpc ? websocketFor(rpc) : ""),
    host: reader.text("INDEXER_HOST") ?? "127.0.0.1",
    port: reader.integer("INDEXER_PORT", 8090, 0, 65535),
    production: nodeEnv === "production",
    ...(helius_webhook_auth === undefined ? {} : { helius_webhook_auth }),
    gap_check_interval_ms: reader.integer("INDEXER_GAP_CHECK_INTERVAL_MS", 30_000, 100, 3_600_000),
    finality_interval_ms: reader.integer("INDEXER_FINALITY_INTERVAL_MS", 2_000, 50, 600_000),
    live: reader.flag("INDEXER_LIVE", true),
    backfill_batch_size: reader.integer("INDEXER_BACKFILL_BATCH_SIZE", 500, 1, 10_000),
    max_subscriptions: reader.integer("INDEXER_MAX_SUBSCRIPTIONS", DEFAULT_SUBSCRIPTION_BOUNDS.total, 1, 1_000_000),
    max_subscriptions_per_client: reader.integer("INDEXER_MAX_SUBSCRIPTIONS_PER_CLIENT", DEFAULT_SUBSCRIPTION_BOUNDS.perClient, 1, 100_000),
    response_cache_ms: reader.integer("INDEXER_RESPONSE_CACHE_MS", 60_000, 0, 3_600_000),
    rpc_calls_per_second: reader.integer("INDEXER_RPC_CALLS_PER_SECOND", 0, 0, 1_000_000),
    log_level: reader.choice("INDEXER_LOG_LEVEL", "info", LOG_LEVELS),
  });
}
