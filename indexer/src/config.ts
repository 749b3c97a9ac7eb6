// The indexer's configuration, read from the environment once at start. Every problem is
// reported together, each naming its variable, so a bad deployment fails before it serves.
import { NETWORK_NAMES, PROGRAM_ID, type NetworkName } from "@agent-market/program";
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
}

/** Localnet (INDEXER_NETWORK=localnet) loads the program at the IDL's address. */
const LOCALNET_PROGRAM_ID = PROGRAM_ID;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid indexer configuration:\n  ${problems.join("\n  ")}`);
  }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    problems.push(`${name}: expected an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
    return fallback;
  }
  return value;
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[], problems: string[]): string {
  const raw = env[name];
  if (!raw) {
    problems.push(`${name}: required`);
    return "";
  }
  try {
    const parsed = new URL(raw);
    if (!protocols.includes(parsed.protocol)) problems.push(`${name}: expected ${protocols.join(" or ")} URL, got ${parsed.protocol}`);
  } catch {
    problems.push(`${name}: not a URL: ${JSON.stringify(raw)}`);
  }
  return raw;
}

/**
 * `<NETWORK>_PROGRAM_ID` of `network`. Unset, it is a problem: the IDL's address is right on
 * localnet only, and an indexer of a deployment at another id would index nothing. `localnet`
 * says that the chain is a local one, which loads the program at the IDL's address.
 */
export function programIdOf(env: NodeJS.ProcessEnv, network: NetworkName, problems: string[], localnet = false): PublicKey {
  const name = `${network.toUpperCase()}_PROGRAM_ID`;
  const raw = env[name];
  if (raw === undefined || raw === "") {
    if (localnet) return LOCALNET_PROGRAM_ID;
    problems.push(`${name}: required, the program's address on ${network}`);
    return PROGRAM_ID;
  }
  try {
    return new PublicKey(raw);
  } catch {
    problems.push(`${name}: not a base58 program address: ${JSON.stringify(raw)}`);
    return PROGRAM_ID;
  }
}

/** The websocket URL a JSON-RPC URL implies when none is given: ws(s), port + 1 as localnet serves it. */
function websocketFor(rpcUrl: string): string {
  const parsed = new URL(rpcUrl);
  parsed.protocol = parsed.protocol === "https:" ? "wss:" : "ws:";
  if (parsed.port) parsed.port = String(Number(parsed.port) + 1);
  return parsed.toString();
}

export function parseConfig(env: NodeJS.ProcessEnv = process.env): IndexerConfig {
  const problems: string[] = [];
  const rawNetwork = env.INDEXER_NETWORK ?? "devnet";
  const localnet = rawNetwork === "localnet";
  const network = (localnet ? "devnet" : rawNetwork) as NetworkName;
  if (!NETWORK_NAMES.includes(network)) problems.push(`INDEXER_NETWORK: expected devnet, mainnet or localnet, got ${JSON.stringify(rawNetwork)}`);
  const database_url = url(env, "INDEXER_DATABASE_URL", ["postgres:", "postgresql:"], problems);
  const rpc_url = url(env, "INDEXER_RPC_URL", ["http:", "https:"], problems);
  let websocket_url = env.INDEXER_WEBSOCKET_URL ?? "";
  if (websocket_url) url(env, "INDEXER_WEBSOCKET_URL", ["ws:", "wss:"], problems);
  else if (problems.every((p) => !p.startsWith("INDEXER_RPC_URL"))) websocket_url = websocketFor(rpc_url);
  const auth = env.INDEXER_HELIUS_WEBHOOK_AUTH;
  if (auth !== undefined && auth.length > 0 && auth.length < 16) problems.push("INDEXER_HELIUS_WEBHOOK_AUTH: at least 16 characters");
  const program_id = NETWORK_NAMES.includes(network) ? programIdOf(env, network, problems, localnet) : PROGRAM_ID; // unused: the bad network fails the configuration
  const nodeEnv = env.NODE_ENV ?? "development";
  // GraphiQL and introspection are off only in production; a mainnet indexer never serves them.
  if (network === "mainnet" && nodeEnv !== "production") {
    problems.push(`NODE_ENV: must be "production" with INDEXER_NETWORK=mainnet (no GraphiQL, no introspection), got ${JSON.stringify(nodeEnv)}`);
  }
  const config: IndexerConfig = {
    network,
    program_id,
    schema: `indexer_${network}`,
    database_url,
    rpc_url,
    websocket_url,
    host: env.INDEXER_HOST ?? "127.0.0.1",
    port: integer(env, "INDEXER_PORT", 8090, 0, 65535, problems),
    production: nodeEnv === "production",
    helius_webhook_auth: auth ? auth : undefined,
    gap_check_interval_ms: integer(env, "INDEXER_GAP_CHECK_INTERVAL_MS", 30_000, 100, 3_600_000, problems),
    finality_interval_ms: integer(env, "INDEXER_FINALITY_INTERVAL_MS", 2_000, 50, 600_000, problems),
    live: (env.INDEXER_LIVE ?? "true") !== "false",
    backfill_batch_size: integer(env, "INDEXER_BACKFILL_BATCH_SIZE", 500, 1, 10_000, problems),
    max_subscriptions: integer(env, "INDEXER_MAX_SUBSCRIPTIONS", DEFAULT_SUBSCRIPTION_BOUNDS.total, 1, 1_000_000, problems),
    max_subscriptions_per_client: integer(env, "INDEXER_MAX_SUBSCRIPTIONS_PER_CLIENT", DEFAULT_SUBSCRIPTION_BOUNDS.perClient, 1, 100_000, problems),
    response_cache_ms: integer(env, "INDEXER_RESPONSE_CACHE_MS", 1_000, 0, 60_000, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
