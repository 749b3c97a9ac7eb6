// The relayer's configuration, read from the environment once at start. Every problem is
// reported together, each naming its variable, so a bad deployment fails before it serves.
import { readFileSync } from "node:fs";

import { ed25519PublicKey, NETWORK_NAMES, type NetworkName } from "@agent-market/program";
import { ConfigError, EnvReader, LOG_LEVELS, type Env, type LogLevel } from "@agent-market/service";
import { Keypair, PublicKey } from "@solana/web3.js";

import type { PriorityFeePolicy } from "./chain/priority-fee.js";
import { committedDevelopmentKey } from "./dev-keys.js";
import type { EndpointPolicy } from "./net/ip-policy.js";
import { redisUrlProblem } from "./redis-options.js";
import { parseSol } from "./sol.js";

export interface NetworkConfig {
  name: NetworkName;
  /**
   * The agent_market program's address on this network (`<NETWORK>_PROGRAM_ID`, required):
   * devnet and mainnet deployments may each have their own, and a local chain that loads the
   * program at the IDL's address is given that address by whoever starts it.
   */
  program_id: PublicKey;
  rpc_url: string;
  websocket_url: string;
  /** Ed25519 key that signs requests to this network's creators (a Solana keypair file). */
  marketplace_signing_key: Uint8Array;
  marketplace_public_key: Uint8Array;
  /** Signs open_escrow, settle and refund on this network (the market's relayer key) and pays their fees. */
  relayer_keypair: Keypair;
  /**
   * This network's indexer GraphQL endpoint (e.g. http://127.0.0.1:8090/graphql); discovery shows
   * each agent's status and figures from it, and nulls without it.
   */
  indexer_url?: string;
}

export interface RelayerConfig {
  host: string;
  port: number;
  database_url: string;
  /**
   * Hot statements prepared once per connection. Off behind poolers that hand one server session
   * to several clients (PgBouncer in transaction mode), where one client's named statement
   * collides with another's.
   */
  database_prepared_statements: boolean;
  /** Origin the dashboard and the sign-in messages are bound to, e.g. https://market.example. */
  public_url: URL;
  /** Keyed-hash secret for API keys; rotating it invalidates every key. */
  api_key_hash_secret: Buffer;
  /** Below this balance on a network, GET /v1/health reports the relayer's SOL as low. */
  relayer_min_balance_lamports: bigint;
  networks: Partial<Record<NetworkName, NetworkConfig>>;
  /** BullMQ's Redis; without it the jobs run in-process with their state in PostgreSQL. */
  redis_url?: string;
  /** BullMQ queue; relayers of one deployment share it, and only they. */
  queue_name: string;
  creator_max_response_bytes: number;
  /** What a streamed execution's reader may leave unread before its stream is cut (the execution goes on). */
  stream_buffer_bytes: number;
  /** How often a streamed execution sends a keep-alive comment. */
  stream_keepalive_ms: number;
  /** A relayer silent this long is taken for dead, and its executions finished by others. */
  instance_timeout_secs: number;
  endpoint_policy: EndpointPolicy;
  /** Opens the escrows of one agent that are ready together, by open_escrow_batch (BATCH_OPENS, on unless "false"). */
  batch_opens: boolean;
  /** Sends the refunds of one agent that are due together, one transaction for several (BATCH_REFUNDS, on unless "false"). */
  batch_refunds: boolean;
  /**
   * Batched transactions are v0 ones loading each agent's fixed accounts from its address lookup
   * table, created on the agent's first batch (LOOKUP_TABLES, on unless "false").
   */
  lookup_tables: boolean;
  /**
   * Under load (an agent's last batch held several calls and enough are in progress), its next
   * batch of opens, settlements or refunds waits until this long after that one started,
   * gathering more (BATCH_GATHER_MS, 60 by default, 0 never waits).
   */
  batch_gather_ms: number;
  /**
   * The unit price of the relayer's transactions: a percentile of the recent slots' prices
   * (PRIORITY_FEE_PERCENTILE, 50), capped (PRIORITY_FEE_MAX_MICRO_LAMPORTS; 0, the default, pays none
   * and asks nothing: a deployment on devnet or mainnet sets it, docs/api.md),
   * asked again every PRIORITY_FEE_REFRESH_MS (10,000).
   */
  priority_fee: PriorityFeePolicy;
  session_ttl_secs: number;
  nonce_ttl_secs: number;
  body_limit_bytes: number;
  schema_limit_bytes: number;
  probe_timeout_ms: number;
  probe_max_response_bytes: number;
  cookie_secure: boolean;
  /** Requests a minute to each unauthenticated route, per client address (and per wallet for nonces). */
  rate_limit_anonymous_per_minute: number;
  /** Listing writes (create, update, pause, resume, retire) a minute, per wallet and per client address. */
  rate_limit_listing_writes_per_minute: number;
  /** Dispute evidence submissions a minute, per wallet and per client address. */
  rate_limit_dispute_evidence_per_minute: number;
  /** Dispute reads (one dispute, a list of them) a minute, per wallet and per client address. */
  rate_limit_dispute_reads_per_minute: number;
  /** Webhook endpoint creations, deletions and test sends a minute, per wallet and per client address. */
  rate_limit_webhook_writes_per_minute: number;
  /** Executions one key may have in flight at once, across every relayer. */
  executions_in_flight_per_key: number;
  /** Executions one agent may have in flight at once, across every caller and relayer. */
  executions_in_flight_per_agent: number;
  /** Refunds an agent's creator may cause within the window before its circuit opens. */
  circuit_breaker_failures: number;
  circuit_breaker_window_secs: number;
  /** How long an open circuit refuses executions before one probe call is let through. */
  circuit_breaker_cooloff_secs: number;
  log_level: LogLevel;
  /** The built dashboard (`app/dist`) this relayer serves on its own origin; off when unset. */
  dashboard?: DashboardConfig;
}

export interface DashboardConfig {
  dir: string;
  /** The indexer's GraphQL endpoint the dashboard reads usage and status from. */
  indexer_graphql_url?: string;
  /** Offers the browser-kept test wallet and localnet explorer links; never for mainnet. */
  localnet: boolean;
  /**
   * Per hosted network, an RPC address the page itself may call (it answers CORS and is fine to
   * publish): the creators' and the arbiter's screens read accounts and send the transactions
   * their wallets sign through it.
   */
  rpc_urls: Partial<Record<NetworkName, string>>;
  /**
   * Localnet only: the local marketplace's starter host, which holds a signing key for a
   * newcomer's agent so that it can be listed from the browser alone (routes/dashboard-starter-agent.ts).
   */
  starter_agent?: { url: string; token: string };
}

export { ConfigError };

export function parseConfig(env: Env = process.env): RelayerConfig {
  const reader = new EnvReader(env);

  const port = reader.integer("RELAYER_PORT", 8080, 0, 65535);
  const host = reader.text("RELAYER_HOST") ?? "127.0.0.1";
  const database_url = reader.required("DATABASE_URL", "a PostgreSQL connection string (postgres://127.0.0.1:5432/agent_market)");
  if (database_url) reader.url("DATABASE_URL", database_url, ["postgres:", "postgresql:"]);
  if (reader.text("EMBEDDED_DATABASE_DIR") !== undefined) {
    reader.problem("EMBEDDED_DATABASE_DIR is no longer read: `npm start` runs its own PostgreSQL and sets DATABASE_URL");
  }
  const prepared = reader.flag("DATABASE_PREPARED_STATEMENTS", true);

  const public_url = reader.url("PUBLIC_URL", reader.text("PUBLIC_URL") ?? `http://localhost:${port}`, ["http:", "https:"]);

  let api_key_hash_secret = Buffer.alloc(0);
  const secret = reader.required("API_KEY_HASH_SECRET", "at least 32 random bytes as hex (openssl rand -hex 32)");
  if (secret) {
    if (!/^[0-9a-fA-F]+$/.test(secret) || secret.length % 2 !== 0 || secret.length < 64) {
      reader.problem("API_KEY_HASH_SECRET must be at least 32 bytes written as hex (64+ hex characters)");
    } else {
      api_key_hash_secret = Buffer.from(secret, "hex");
    }
  }

  let relayer_min_balance_lamports = 1_000_000_000n;
  const minBalance = reader.text("RELAYER_MIN_BALANCE_SOL");
  if (minBalance !== undefined) {
    const parsed = parseSol(minBalance);
    if (parsed !== null) relayer_min_balance_lamports = parsed;
    else reader.problem(`RELAYER_MIN_BALANCE_SOL must be an amount of SOL (up to 9 decimals), got "${minBalance}"`);
  }

  const redis_url = reader.text("REDIS_URL");
  if (redis_url !== undefined && reader.url("REDIS_URL", redis_url, ["redis:", "rediss:"])) {
    const problem = redisUrlProblem(redis_url);
    if (problem) reader.problem(problem);
  }

  const keypair = (name: string, what: string): Keypair | undefined => {
    const path = reader.required(name, what);
    if (!path) return undefined;
    try {
      return readKeypair(path);
    } catch (error) {
      reader.problem(`${name} (${path}) is not a readable Solana keypair file: ${(error as Error).message}`);
      return undefined;
    }
  };

  const networks: Partial<Record<NetworkName, NetworkConfig>> = {};
  for (const name of NETWORK_NAMES) {
    const prefix = name.toUpperCase();
    const rpc = reader.text(`${prefix}_RPC_URL`);
    // Without any network, devnet's keys are still reported, so one run lists everything missing.
    const none = reader.text("DEVNET_RPC_URL") === undefined && reader.text("MAINNET_RPC_URL") === undefined;
    if (rpc === undefined && !(none && name === "devnet")) continue;
    // Devnet falls back on the unprefixed names of single-network deployments; mainnet never
    // does, so a key set up for tests cannot end up holding real funds' fees or signing.
    const keyName = (key: string) => (name === "devnet" && reader.text(`${prefix}_${key}`) === undefined ? key : `${prefix}_${key}`);
    const marketplaceName = keyName("MARKETPLACE_KEYPAIR");
    const relayerName = keyName("RELAYER_KEYPAIR");
    const marketplace = keypair(
      marketplaceName,
      `path of a Solana keypair file (JSON array of 64 bytes) whose key signs requests to ${name} creators`,
    );
    const relayer = keypair(
      relayerName,
      `path of the Solana keypair file of the ${name} market's relayer (signs open_escrow, settle and refund, pays their fees)`,
    );
    if (name === "mainnet") {
      for (const [variable, key] of [
        [marketplaceName, marketplace],
        [relayerName, relayer],
      ] as const) {
        const committed = key && committedDevelopmentKey(key.publicKey.toBase58());
        if (committed) {
          reader.problem(
            `${variable} is the committed development keypair "${committed}" of localnet/dev-config.json; mainnet needs a key of its own`,
          );
        }
      }
    }
    const programId = reader.required(`${prefix}_PROGRAM_ID`, `the agent_market program's base58 address on ${name}`);
    const program_id = programId ? programAddress(programId) : undefined;
    if (programId && !program_id) {
      reader.problem(`${prefix}_PROGRAM_ID must be the program's base58 address (32 bytes), got "${programId}"`);
    }
    if (rpc === undefined) continue;
    const rpcUrl = reader.url(`${prefix}_RPC_URL`, rpc, ["http:", "https:"]);
    if (!rpcUrl) continue;
    const ws = reader.text(`${prefix}_WS_URL`) ?? defaultWebsocketUrl(rpcUrl);
    if (!reader.url(`${prefix}_WS_URL`, ws, ["ws:", "wss:"])) continue;
    const indexer = reader.text(`${prefix}_INDEXER_URL`);
    if (indexer !== undefined && !reader.url(`${prefix}_INDEXER_URL`, indexer, ["http:", "https:"])) continue;
    if (!marketplace || !relayer || !program_id) continue;
    networks[name] = {
      name,
      program_id,
      rpc_url: rpc,
      websocket_url: ws,
      marketplace_signing_key: marketplace.secretKey,
      marketplace_public_key: ed25519PublicKey(marketplace.secretKey),
      relayer_keypair: relayer,
      ...(indexer === undefined ? {} : { indexer_url: indexer }),
    };
  }
  if (reader.text("DEVNET_RPC_URL") === undefined && reader.text("MAINNET_RPC_URL") === undefined) {
    reader.problem("no network configured: set DEVNET_RPC_URL (svc_test_ keys) and/or MAINNET_RPC_URL (svc_live_ keys)");
  }

  // Said rather than ignored: a relayer told to settle per call must not seem to.
  if (reader.text("SETTLEMENT") !== undefined) {
    reader.problem("SETTLEMENT is no longer read: every result settles by settle_batch into its agent's receipt log (the per-call design is retired)");
  }
  const batch_opens = reader.flag("BATCH_OPENS", true);
  const batch_refunds = reader.flag("BATCH_REFUNDS", true);
  const lookup_tables = reader.flag("LOOKUP_TABLES", true);
  const policy = reader.choice("ENDPOINT_POLICY", "public", ["public", "development"]);
  if (policy === "development" && reader.text("MAINNET_RPC_URL") !== undefined) {
    reader.problem("ENDPOINT_POLICY=development is refused with MAINNET_RPC_URL: mainnet agents must be public https endpoints");
  }

  const cookieSecure = reader.text("COOKIE_SECURE");
  if (cookieSecure !== undefined && cookieSecure !== "true" && cookieSecure !== "false") {
    reader.problem(`COOKIE_SECURE must be "true" or "false", got "${cookieSecure}"`);
  }
  // Real funds: the session cookie, the sign-in messages' origin and the queue's Redis (which
  // carries its password and the jobs) never travel in clear.
  if (reader.text("MAINNET_RPC_URL") !== undefined) {
    if (public_url !== undefined && public_url.protocol !== "https:") {
      reader.problem(`PUBLIC_URL must be an https: URL with MAINNET_RPC_URL, got "${public_url.href}"`);
    }
    if (cookieSecure === "false") reader.problem("COOKIE_SECURE=false is refused with MAINNET_RPC_URL: session cookies must be Secure");
    if (redis_url !== undefined && URL.canParse(redis_url) && new URL(redis_url).protocol !== "rediss:") {
      reader.problem("REDIS_URL must be a rediss:// (TLS) URL with MAINNET_RPC_URL");
    }
  }

  const dashboardDir = reader.text("DASHBOARD_DIR");
  const indexerGraphqlUrl = reader.text("INDEXER_GRAPHQL_URL");
  if (indexerGraphqlUrl !== undefined) reader.url("INDEXER_GRAPHQL_URL", indexerGraphqlUrl, ["http:", "https:"]);
  const dashboardLocalnet = reader.flag("DASHBOARD_LOCALNET", false);
  if (dashboardLocalnet && networks.mainnet !== undefined) {
    reader.problem("DASHBOARD_LOCALNET offers a browser-kept test wallet: never with MAINNET_RPC_URL");
  }
  const dashboardRpcUrls: Partial<Record<NetworkName, string>> = {};
  const dashboardRpcVariables = [
    ["devnet", "DASHBOARD_DEVNET_RPC_URL"],
    ["mainnet", "DASHBOARD_MAINNET_RPC_URL"],
  ] as const;
  for (const [name, variable] of dashboardRpcVariables) {
    const value = reader.text(variable);
    if (value === undefined) continue;
    // A mainnet page is served over https, and a browser refuses its calls to plain http.
    if (reader.url(variable, value, name === "mainnet" ? ["https:"] : ["http:", "https:"]) === undefined) continue;
    if (dashboardDir === undefined) {
      reader.problem(`${variable} is for the dashboard: set DASHBOARD_DIR too`);
    } else if (networks[name] === undefined) {
      reader.problem(`${variable} is set but ${name} is not served: set ${name.toUpperCase()}_RPC_URL too`);
    } else if (dashboardLocalnet) {
      reader.problem(`${variable} is for a hosted chain: with DASHBOARD_LOCALNET the page reaches the local chain through the relayer`);
    } else {
      dashboardRpcUrls[name] = value;
    }
  }
  const starterUrl = reader.text("DASHBOARD_STARTER_AGENT_URL");
  const starterToken = reader.text("DASHBOARD_STARTER_AGENT_TOKEN");
  let starterAgent: { url: string; token: string } | undefined;
  if (starterUrl !== undefined || starterToken !== undefined) {
    if (!dashboardLocalnet || dashboardDir === undefined) {
      reader.problem("DASHBOARD_STARTER_AGENT_URL is the local marketplace's: set DASHBOARD_DIR and DASHBOARD_LOCALNET too");
    } else if (starterUrl === undefined || starterToken === undefined) {
      reader.problem("DASHBOARD_STARTER_AGENT_URL and DASHBOARD_STARTER_AGENT_TOKEN go together");
    } else if (reader.url("DASHBOARD_STARTER_AGENT_URL", starterUrl, ["http:", "https:"]) !== undefined) {
      starterAgent = { url: starterUrl.replace(/\/+$/, ""), token: starterToken };
    }
  }

  const config: RelayerConfig = {
    host,
    port,
    database_url,
    database_prepared_statements: prepared,
    public_url: public_url ?? new URL("http://localhost"),
    api_key_hash_secret,
    relayer_min_balance_lamports,
    networks,
    ...(redis_url === undefined ? {} : { redis_url }),
    queue_name: reader.text("QUEUE_NAME") ?? "agent-market-executions",
    creator_max_response_bytes: reader.integer("CREATOR_MAX_RESPONSE_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    stream_buffer_bytes: reader.integer("STREAM_BUFFER_BYTES", 256 * 1024, 1024, 64 * 1024 * 1024),
    stream_keepalive_ms: reader.integer("STREAM_KEEPALIVE_MS", 15_000, 100, 300_000),
    instance_timeout_secs: reader.integer("INSTANCE_TIMEOUT_SECS", 10, 2, 3600),
    endpoint_policy: policy,
    batch_opens,
    batch_refunds,
    lookup_tables,
    batch_gather_ms: reader.integer("BATCH_GATHER_MS", 60, 0, 1_000),
    priority_fee: {
      percentile: reader.integer("PRIORITY_FEE_PERCENTILE", 50, 0, 100),
      max_micro_lamports: BigInt(reader.integer("PRIORITY_FEE_MAX_MICRO_LAMPORTS", 0, 0, 1_000_000_000)),
      refresh_ms: reader.integer("PRIORITY_FEE_REFRESH_MS", 10_000, 100, 600_000),
    },
    session_ttl_secs: reader.integer("SESSION_TTL_SECS", 7 * 24 * 3600, 60, 90 * 24 * 3600),
    nonce_ttl_secs: reader.integer("SIGN_IN_NONCE_TTL_SECS", 300, 30, 3600),
    body_limit_bytes: reader.integer("BODY_LIMIT_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    schema_limit_bytes: reader.integer("SCHEMA_LIMIT_BYTES", 64 * 1024, 256, 1024 * 1024),
    probe_timeout_ms: reader.integer("PROBE_TIMEOUT_MS", 10_000, 100, 120_000),
    probe_max_response_bytes: reader.integer("PROBE_MAX_RESPONSE_BYTES", 1024 * 1024, 1024, 64 * 1024 * 1024),
    rate_limit_anonymous_per_minute: reader.integer("RATE_LIMIT_ANONYMOUS_PER_MINUTE", 120, 1, 1_000_000),
    rate_limit_listing_writes_per_minute: reader.integer("RATE_LIMIT_LISTING_WRITES_PER_MINUTE", 20, 1, 1_000_000),
    rate_limit_dispute_evidence_per_minute: reader.integer("RATE_LIMIT_DISPUTE_EVIDENCE_PER_MINUTE", 10, 1, 1_000_000),
    rate_limit_dispute_reads_per_minute: reader.integer("RATE_LIMIT_DISPUTE_READS_PER_MINUTE", 60, 1, 1_000_000),
    rate_limit_webhook_writes_per_minute: reader.integer("RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE", 20, 1, 1_000_000),
    executions_in_flight_per_key: reader.integer("EXECUTIONS_IN_FLIGHT_PER_KEY", 64, 1, 100_000),
    executions_in_flight_per_agent: reader.integer("EXECUTIONS_IN_FLIGHT_PER_AGENT", 128, 1, 100_000),
    circuit_breaker_failures: reader.integer("CIRCUIT_BREAKER_FAILURES", 20, 1, 1_000_000),
    circuit_breaker_window_secs: reader.integer("CIRCUIT_BREAKER_WINDOW_SECS", 60, 1, 86_400),
    circuit_breaker_cooloff_secs: reader.integer("CIRCUIT_BREAKER_COOLOFF_SECS", 60, 1, 86_400),
    cookie_secure: cookieSecure === undefined ? public_url?.protocol === "https:" : cookieSecure === "true",
    log_level: reader.choice("LOG_LEVEL", "info", LOG_LEVELS),
    ...(dashboardDir === undefined
      ? {}
      : {
          dashboard: {
            dir: dashboardDir,
            ...(indexerGraphqlUrl === undefined ? {} : { indexer_graphql_url: indexerGraphqlUrl }),
            localnet: dashboardLocalnet,
            rpc_urls: dashboardRpcUrls,
            ...(starterAgent === undefined ? {} : { starter_agent: starterAgent }),
          },
        }),
  };
  return reader.finish("relayer", config);
}

/** A Solana CLI keypair file: a JSON array of the 64 secret key bytes. */
export function readKeypair(path: string): Keypair {
  const bytes = JSON.parse(readFileSync(path, "utf8")) as unknown;
  if (!Array.isArray(bytes) || bytes.length !== 64) throw new Error("not a JSON array of 64 bytes");
  return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
}

function programAddress(text: string): PublicKey | undefined {
  try {
    return new PublicKey(text);
  } catch {
    return undefined;
  }
}

/** Solana's convention, which solana-test-validator and localnet follow: PubSub on the RPC port + 1. */
function defaultWebsocketUrl(rpc: URL): string {
  const ws = new URL(rpc.href);
  ws.protocol = rpc.protocol === "https:" ? "wss:" : "ws:";
  if (rpc.port !== "") ws.port = String(Number(rpc.port) + 1);
  return ws.href;
}
