// The whole marketplace on one machine: PostgreSQL (the embedded server, or one given), localnet
// (the local chain), the indexer and the relayer (each its own process), the example agents registered on-chain
// with collateral and listed, and a test wallet funded with USDC, an allowance and a `svc_test_`
// key. The processes run under a supervisor (supervisor.ts); the state is kept in a data folder,
// so a restart finds the same database, chain, agents and key.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { exampleAgents, startStarterHost, type RunningAgent, type RunningStarterHost } from "@agent-market/examples";
import { Connection, Keypair } from "@solana/web3.js";

import { keypairAt, rpc, setUpDemo, type DemoAgent, type State } from "./demo.js";
import { legacyDatabaseMessage, preparePostgres, untilAccepting } from "./postgres.js";
import { Supervisor, type SupervisorOptions } from "./supervisor.js";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
/** The dashboard's build (`npm run build` in app/). */
const DASHBOARD_DIR = join(REPO_ROOT, "app", "dist");

/** How long each process may take to stop before it is killed; their sum bounds a Ctrl-C. */
export const STOP_BOUNDS_MS = { indexer: 10_000, relayer: 20_000, localnet: 5_000, postgres: 10_000 } as const;

export interface LocalMarketplaceOptions {
  /** Where the chain's ledger, the database, the keys and the demo state live. */
  data_dir: string;
  rpc_port: number;
  relayer_port: number;
  /** The indexer's GraphQL server's port; a free one when left out. */
  indexer_port?: number;
  /** First of the ports the example agents listen on (one each, in order), then the starter host's. */
  agent_port: number;
  /** The embedded PostgreSQL's port; a free one when left out. Unused with `database_url`. */
  postgres_port?: number;
  slot_ms: number;
  /** A PostgreSQL server of your own; the embedded PostgreSQL in the data folder when left out. */
  database_url?: string;
  /** BullMQ's Redis; in-process jobs when left out. */
  redis_url?: string;
  localnet_binary?: string;
  /** More flags for localnet (`--profile devnet-like`, say: docs/localnet.md). */
  localnet_args?: string[];
  /** Extra environment of the relayer process. */
  relayer_env?: Record<string, string>;
  /** Options of the relayer's node process (a profiler's, say). */
  relayer_node_options?: string[];
  log: (line: string) => void;
  /**
   * Called when a process exited and could not (or must not) be restarted; every process has
   * stopped by then. Logged when left out.
   */
  on_fatal?: (reason: string) => void;
  /** Aborting it while the marketplace starts stops what has started; the start then fails. */
  signal?: AbortSignal;
  /** Restart pacing (tests shorten it). */
  supervision?: Pick<SupervisorOptions, "backoff_ms" | "max_backoff_ms" | "max_restarts" | "restart_window_ms">;
}

export interface LocalMarketplace {
  rpc_url: string;
  relayer_url: string;
  /** The indexer's GraphQL endpoint (GraphiQL on GET). */
  indexer_url: string;
  /** The starter host, which serves the agents newcomers list from the dashboard (each under /agents/<address>). */
  starter_url: string;
  database_url: string;
  agents: DemoAgent[];
  wallet: Keypair;
  api_key: string;
  /** The processes running now (a restarted one is a new process). */
  processes: { readonly localnet: ChildProcess; readonly relayer: ChildProcess; readonly indexer: ChildProcess; readonly postgres?: ChildProcess };
  /** The relayer's environment, for its other commands (agent-market-reconcile). */
  relayer_env: Record<string, string>;
  /** Stops the indexer, the relayer, localnet and PostgreSQL, in that order, then the agents. */
  stop(): Promise<void>;
  /** Kills every process at once. */
  kill(): void;
}

/** The localnet binary cargo built: the optimised one if there is one, else the debug one. */
export function localnetBinary(): string {
  const target = process.env.CARGO_TARGET_DIR || join(homedir(), ".cache", "agent-market", "target");
  const release = join(target, "host-release", "localnet");
  return existsSync(release) ? release : join(target, "debug", "localnet");
}

function devKeypair(name: string): Keypair {
  const config = JSON.parse(readFileSync(join(REPO_ROOT, "localnet", "dev-config.json"), "utf8")) as {
    keypairs: Record<string, number[]>;
  };
  return Keypair.fromSecretKey(Uint8Array.from(config.keypairs[name]!));
}

/** Listens on `port` (0: any) for a moment; the port it got, or undefined when it is taken. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once("error", () => resolvePort(undefined));
    server.listen(port, "127.0.0.1", () => {
      const { port: got } = server.address() as { port: number };
      server.close(() => resolvePort(got));
    });
  });
}

/**
 * Fails when a port is taken: a readiness probe would otherwise take whatever answers there (a
 * relayer of another marketplace, say) for the process just started. Fails as well when two of the
 * marketplace's own ports are one (localnet's websocket is its RPC port + 1, the agents' ports
 * follow each other): each is free now, and the second process to start would find it taken.
 */
async function checkPortsFree(ports: [number, string][]): Promise<void> {
  const seen = new Map<number, string>();
  for (const [port, variable] of ports) {
    const other = seen.get(port);
    if (other !== undefined) throw new Error(`port ${port} is asked for twice (${other} and ${variable}): choose ports that do not overlap`);
    seen.set(port, variable);
  }
  for (const [port, variable] of ports) {
    if ((await tryPort(port)) === undefined) {
      throw new Error(`port ${port} is in use (another npm start, or another program): stop it, or choose another port with ${variable}=…`);
    }
  }
}

/** A free port that is none of `taken`. */
async function freePortBesides(taken: readonly number[]): Promise<number> {
  for (;;) {
    const port = (await tryPort(0))!;
    if (!taken.includes(port)) return port;
  }
}

/** Polls `probe` until it holds, while `child` runs. */
async function until(child: ChildProcess, probe: () => Promise<boolean>): Promise<void> {
  while (child.exitCode === null && child.signalCode === null) {
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startLocalMarketplace(options: LocalMarketplaceOptions): Promise<LocalMarketplace> {
  const { data_dir, log } = options;
  const legacy = legacyDatabaseMessage(data_dir);
  if (legacy) throw new Error(legacy);
  mkdirSync(data_dir, { recursive: true });
  const statePath = join(data_dir, "state.json");
  const state: State = existsSync(statePath)
    ? (JSON.parse(readFileSync(statePath, "utf8")) as State)
    : { api_key_hash_secret: randomBytes(32).toString("hex"), agent_ids: {} };
  const save = () => writeFileSync(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });

  const binary = options.localnet_binary ?? localnetBinary();
  if (!existsSync(binary)) throw new Error(`${binary} does not exist: run \`npm run build\` first`);

  const running: (RunningAgent | RunningStarterHost)[] = [];
  const closeAgents = () => Promise.all(running.splice(0).map((agent) => agent.close().catch(() => undefined)));
  const starter_port = options.agent_port + Object.keys(exampleAgents).length;
  const supervisor = new Supervisor({
    log,
    log_dir: join(data_dir, "logs"),
    pid_file: join(data_dir, "processes.json"),
    on_fatal: (reason) => void closeAgents().then(() => (options.on_fatal ?? log)(reason)),
    ...options.supervision,
  });
  await supervisor.stopLeftovers();
  const ports: [number, string][] = [
    ...(options.database_url === undefined && options.postgres_port !== undefined ? [[options.postgres_port, "POSTGRES_PORT"] as [number, string]] : []),
    [options.rpc_port, "LOCALNET_PORT"],
    [options.rpc_port + 1, "LOCALNET_PORT"],
    [options.relayer_port, "RELAYER_PORT"],
    ...(options.indexer_port !== undefined ? [[options.indexer_port, "INDEXER_PORT"] as [number, string]] : []),
    ...Object.keys(exampleAgents).map((_, i) => [options.agent_port + i, "AGENTS_PORT"] as [number, string]),
    [starter_port, "AGENTS_PORT"],
  ];
  await checkPortsFree(ports);
  const indexer_port = options.indexer_port ?? (await freePortBesides(ports.map(([port]) => port)));
  const stop = async () => {
    await supervisor.stop();
    await closeAgents();
  };
  options.signal?.addEventListener("abort", () => void stop(), { once: true });

  try {
    let database_url = options.database_url;
    let postgres: { process: ChildProcess } | undefined;
    if (database_url === undefined) {
      state.database_password ??= randomBytes(18).toString("hex");
      save();
      const port = options.postgres_port ?? (await freePortBesides([...ports.map(([taken]) => taken), indexer_port]));
      const server = preparePostgres({ data_dir, port, password: state.database_password, log });
      log(`starting PostgreSQL on 127.0.0.1:${port} (cluster in ${server.dir})`);
      postgres = await supervisor.start({
        name: "postgres",
        command: server.command,
        args: server.args,
        env: server.env,
        ...(server.uid === undefined ? {} : { uid: server.uid, gid: server.gid }),
        ready: (child) => untilAccepting(server.url, () => child.exitCode === null && child.signalCode === null),
        // Crash recovery replays the write-ahead log: every committed transaction survives.
        on_exit: "restart",
        // SIGINT is PostgreSQL's fast shutdown: sessions are ended, the data is checkpointed.
        stop_signal: "SIGINT",
        stop_timeout_ms: STOP_BOUNDS_MS.postgres,
      });
      database_url = server.url;
    }
    save();

    log(`starting localnet on 127.0.0.1:${options.rpc_port} (ledger in ${join(data_dir, "ledger")})`);
    const rpc_url = `http://127.0.0.1:${options.rpc_port}`;
    const localnet = await supervisor.start({
      name: "localnet",
      command: binary,
      args: [
        "--port",
        String(options.rpc_port),
        "--slot-ms",
        String(options.slot_ms),
        "--ledger",
        join(data_dir, "ledger"),
        ...(options.localnet_args ?? []),
      ],
      cwd: REPO_ROOT,
      ready: (child) => until(child, async () => (await rpc<string>(rpc_url, "getHealth", [])) === "ok"),
      on_exit: {
        stop:
          "a restart is not safe: a crash can lose the chain's last slot, whose transactions the relayer may have " +
          "recorded (the next npm start restarts from the saved ledger; then `(set -a; . " +
          join(data_dir, "relayer.env") +
          "; npm run reconcile)` compares the database with the chain)",
      },
      stop_timeout_ms: STOP_BOUNDS_MS.localnet,
    });
    // Localnet loads the program at the IDL's address and says which: the relayer and the indexer
    // are given that id, as a deployment gives them its own.
    const program_id = (await rpc<{ programId: string }>(rpc_url, "localnet_marketConfig", [])).programId;
    const connection = new Connection(rpc_url, { commitment: "confirmed", wsEndpoint: `ws://127.0.0.1:${options.rpc_port + 1}` });
    (connection as unknown as { _disableBlockhashCaching: boolean })._disableBlockhashCaching = true;

    const indexer_url = `http://127.0.0.1:${indexer_port}/graphql`;
    const relayerKeypairPath = join(data_dir, "relayer.json");
    writeFileSync(relayerKeypairPath, JSON.stringify([...devKeypair("relayer").secretKey]), { mode: 0o600 });
    const marketplace_key = keypairAt(join(data_dir, "marketplace.json"));
    const relayer_url = `http://127.0.0.1:${options.relayer_port}`;
    const dashboard = existsSync(join(DASHBOARD_DIR, "index.html"));
    // The agents newcomers list from the dashboard: the relayer asks it for their keys, with a
    // token of this start's (the keys themselves are kept in the data folder).
    const starter_token = randomBytes(24).toString("hex");
    const starter = await startStarterHost({
      marketplaceKey: marketplace_key.publicKey.toBase58(),
      keysFile: join(data_dir, "starter-agents.json"),
      adminToken: starter_token,
      port: starter_port,
    });
    running.push(starter);
    log(`starting the relayer on ${relayer_url} (${options.database_url ? "your PostgreSQL" : "embedded PostgreSQL"}, ${options.redis_url ? "BullMQ" : "in-process jobs"})`);
    const relayer_env: Record<string, string> = {
      RELAYER_PORT: String(options.relayer_port),
      PUBLIC_URL: `http://localhost:${options.relayer_port}`,
      DATABASE_URL: database_url,
      ...(options.redis_url ? { REDIS_URL: options.redis_url } : {}),
      API_KEY_HASH_SECRET: state.api_key_hash_secret,
      MARKETPLACE_KEYPAIR: join(data_dir, "marketplace.json"),
      RELAYER_KEYPAIR: relayerKeypairPath,
      DEVNET_RPC_URL: rpc_url,
      DEVNET_PROGRAM_ID: program_id,
      DEVNET_INDEXER_URL: indexer_url,
      // The dashboard, served by the relayer on its own origin, with the local test wallet.
      ...(dashboard
        ? {
            DASHBOARD_DIR,
            INDEXER_GRAPHQL_URL: indexer_url,
            DASHBOARD_LOCALNET: "true",
            DASHBOARD_STARTER_AGENT_URL: starter.url,
            DASHBOARD_STARTER_AGENT_TOKEN: starter_token,
          }
        : {}),
      ENDPOINT_POLICY: "development",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      ...options.relayer_env,
    };
    // For the relayer's other commands, from a shell: (set -a; . .agent-market/relayer.env; npm run reconcile)
    const quoted = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
    writeFileSync(
      join(data_dir, "relayer.env"),
      Object.entries(relayer_env).map(([name, value]) => `${name}=${quoted(value)}\n`).join(""),
      { mode: 0o600 },
    );
    const relayer = await supervisor.start({
      name: "relayer",
      command: process.execPath,
      args: [...(options.relayer_node_options ?? []), join(REPO_ROOT, "relayer", "dist", "main.js")],
      cwd: REPO_ROOT,
      env: { ...process.env, ...relayer_env },
      ready: (child) => until(child, async () => (await fetch(`${relayer_url}/v1/openapi.json`)).ok),
      // The relayer keeps its state in PostgreSQL and finishes what a dead one left at start.
      on_exit: "restart",
      stop_timeout_ms: STOP_BOUNDS_MS.relayer,
      echo: true,
    });

    // The indexer keeps its tables in its own schema (indexer_devnet) of the relayer's database,
    // and resumes from its checkpoint after a restart. It starts after the relayer, which created the
    // database, and stops before it; until it serves, listings show no figures.
    log(`starting the indexer on ${indexer_url}`);
    const indexer = await supervisor.start({
      name: "indexer",
      command: process.execPath,
      args: [join(REPO_ROOT, "indexer", "dist", "main.js")],
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        INDEXER_DATABASE_URL: database_url,
        INDEXER_RPC_URL: rpc_url,
        INDEXER_WEBSOCKET_URL: `ws://127.0.0.1:${options.rpc_port + 1}`,
        INDEXER_NETWORK: "localnet",
        DEVNET_PROGRAM_ID: program_id,
        INDEXER_HOST: "127.0.0.1",
        INDEXER_PORT: String(indexer_port),
      },
      ready: (child) =>
        until(child, async () => {
          const response = await fetch(indexer_url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ query: "{ indexer { network } }" }),
          });
          return response.ok;
        }),
      on_exit: "restart",
      stop_timeout_ms: STOP_BOUNDS_MS.indexer,
    });

    const demo = await setUpDemo({
      data_dir,
      state,
      save,
      rpc_url,
      relayer_url,
      connection,
      marketplace_key,
      agent_port: options.agent_port,
      running,
      log,
    });
    return {
      rpc_url,
      relayer_url,
      indexer_url,
      starter_url: starter.url,
      database_url,
      ...demo,
      processes: {
        get localnet() {
          return localnet.process;
        },
        get indexer() {
          return indexer.process;
        },
        get relayer() {
          return relayer.process;
        },
        get postgres() {
          return postgres?.process;
        },
      },
      relayer_env,
      stop,
      kill: () => supervisor.kill(),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
