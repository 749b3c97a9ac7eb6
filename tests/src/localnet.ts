// Runs the `localnet` binary for a test: spawned on free ports, read from the one JSON line it
// prints once serving, and always killed afterwards (by the test's `after` hook, or when this
// process exits). Also a tiny JSON-RPC client for its development methods and the development
// keys of localnet/dev-config.json.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { Connection, Keypair, PublicKey, type Commitment } from "@solana/web3.js";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * `$LOCALNET_PROFILE`: the localnet profile every test's chain runs with. Unset, the instant
 * node (a sent transaction runs within the call); `devnet-like` gives cluster-like timing
 * (processed at the next slot, some transactions lost, RPC latency: docs/localnet.md), which
 * scripts/test.sh uses for a second run of the relayer's execution tests.
 */
export const PROFILE = process.env.LOCALNET_PROFILE ?? "";

/**
 * Slot time the tests run the chain at: `$LOCALNET_SLOT_MS`, else 50 ms (confirmed ≈ 50 ms,
 * finalized ≈ 1.6 s).
 */
export const SLOT_MS = Number(process.env.LOCALNET_SLOT_MS ?? 50);

/** `$LOCALNET_SEED`: which transactions a devnet-like chain loses; fixed so a failure replays. */
export const SEED = process.env.LOCALNET_SEED ?? "1";

/** `$LOCALNET_BIN`, else the debug build in the shared cargo target directory. */
export function localnetBinary(): string {
  if (process.env.LOCALNET_BIN) return process.env.LOCALNET_BIN;
  const target = process.env.CARGO_TARGET_DIR || join(homedir(), ".cache", "agent-market", "target");
  return join(target, "debug", "localnet");
}

/** What localnet prints on stdout once it serves. */
export interface ReadyLine {
  rpcUrl: string;
  websocketUrl: string;
  rpcPort: number;
  market: { programId: string; usdcMint: string; treasury: string; relayer: string };
  /** What decides which transactions are lost and the RPC jitter. */
  seed: number;
}

/** `localnet_marketConfig`. */
export interface MarketConfig {
  programId: PublicKey;
  market: PublicKey;
  usdcMint: PublicKey;
  treasury: PublicKey;
  authority: PublicKey;
  relayer: PublicKey;
  arbiter: PublicKey;
  delegate: PublicKey;
  faucet: PublicKey;
  feeBps: number;
}

export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`JSON-RPC error ${code}: ${message}`);
  }
}

let nextId = 1;

/** One JSON-RPC 2.0 call over HTTP; throws JsonRpcError for an error answer. */
export async function rpcCall<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } };
  if (body.error) throw new JsonRpcError(body.error.code, body.error.message, body.error.data);
  return body.result as T;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills every node still running when this process ends, however it ends. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const child of running) child.kill("SIGKILL");
    running.clear();
  };
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killAll();
      process.kill(process.pid, signal);
    });
  }
}

export interface StartOptions {
  /** `--ledger DIR`: state kept in DIR across restarts. */
  ledger?: string;
  /** `--port N`: JSON-RPC on N and PubSub on N + 1; free ports when left out. */
  port?: number;
  slotMs?: number;
  /** More flags, after those above and the profile's (they override the profile's settings). */
  args?: string[];
  /** How long to wait for the ready line. */
  timeoutMs?: number;
}

/** A running localnet. */
export class Localnet {
  private readonly connections: Connection[] = [];
  private exited: Promise<number | null>;
  private program?: PublicKey;

  private constructor(
    readonly child: ChildProcess,
    readonly ready: ReadyLine,
    private readonly stderr: () => string,
  ) {
    this.exited = new Promise((resolveExit) => {
      if (child.exitCode !== null || child.signalCode !== null) resolveExit(child.exitCode);
      else child.once("exit", (code) => resolveExit(code));
    });
  }

  static async start(options: StartOptions = {}): Promise<Localnet> {
    const binary = localnetBinary();
    if (!existsSync(binary)) {
      throw new Error(`${binary} does not exist: build it with \`sh scripts/cargo.sh build -p localnet\` or set LOCALNET_BIN`);
    }
    installExitHook();
    const args = ["--port", String(options.port ?? 0), "--slot-ms", String(options.slotMs ?? SLOT_MS)];
    if (PROFILE) args.push("--profile", PROFILE, "--seed", SEED);
    args.push(...(options.args ?? []));
    if (options.ledger) args.push("--ledger", options.ledger);
    const child = spawn(binary, args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    child.once("exit", () => running.delete(child));

    let stderr = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-16_384);
    });

    const lines = createInterface({ input: child.stdout! });
    const timeoutMs = options.timeoutMs ?? 30_000;
    try {
      const line = await new Promise<string>((resolveLine, reject) => {
        const timer = setTimeout(() => reject(new Error(`localnet printed nothing within ${timeoutMs} ms`)), timeoutMs);
        lines.once("line", (first) => {
          clearTimeout(timer);
          resolveLine(first);
        });
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`localnet exited (${signal ?? code}) before serving`));
        });
        child.once("error", (err) => {
          clearTimeout(timer);
          reject(err);
        });
      });
      const ready = JSON.parse(line) as ReadyLine;
      // Keep draining stdout so that the child never blocks on a full pipe, but let neither the
      // child nor its pipes keep this process alive: a node a test forgot to stop is killed by
      // the exit hook instead of hanging mocha.
      lines.on("line", () => {});
      child.unref();
      (child.stdout as unknown as { unref(): void }).unref();
      (child.stderr as unknown as { unref(): void }).unref();
      return new Localnet(child, ready, () => stderr);
    } catch (err) {
      child.kill("SIGKILL");
      throw new Error(`${(err as Error).message}\n${args.join(" ")}\nstderr:\n${stderr}`);
    }
  }

  get rpcUrl(): string {
    return this.ready.rpcUrl;
  }

  get websocketUrl(): string {
    return this.ready.websocketUrl;
  }

  get rpcPort(): number {
    return this.ready.rpcPort;
  }

  /** What it wrote on stderr (the last 16 KiB), for failure messages. */
  get stderrText(): string {
    return this.stderr();
  }

  /** An ordinary web3.js Connection to it; its WebSocket is closed when the node stops. */
  connection(commitment: Commitment = "confirmed"): Connection {
    const connection = new Connection(this.rpcUrl, { commitment, wsEndpoint: this.websocketUrl });
    // web3.js reuses a fetched blockhash for 30 s, but at SLOT_MS a blockhash expires after
    // 150 × 50 ms = 7.5 s: without this, a test that runs long sends with an expired one.
    (connection as unknown as { _disableBlockhashCaching: boolean })._disableBlockhashCaching = true;
    this.connections.push(connection);
    return connection;
  }

  call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return rpcCall<T>(this.rpcUrl, method, params);
  }

  /** `localnet_mintUsdc`: test USDC into the owner's associated token account, created if needed. */
  async mintUsdc(owner: PublicKey, amount: bigint): Promise<{ signature: string; tokenAccount: PublicKey; balance: bigint }> {
    if (amount < 0n || amount > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`cannot mint ${amount} over JSON`);
    const result = await this.call<{ signature: string; tokenAccount: string; balance: string }>("localnet_mintUsdc", [
      owner.toBase58(),
      Number(amount),
    ]);
    return { signature: result.signature, tokenAccount: new PublicKey(result.tokenAccount), balance: BigInt(result.balance) };
  }

  /**
   * `localnet_advanceClock`: moves `Clock::unix_timestamp` forward by `seconds` (or produces
   * `slots` blocks at once), then waits for the next slot so that what is sent afterwards runs
   * in a block with the new time and a fresh blockhash.
   */
  async advanceClock(by: { seconds: number } | { slots: number }): Promise<{ slot: number; unixTimestamp: number }> {
    const result = await this.call<{ slot: number; unixTimestamp: number }>("localnet_advanceClock", [by]);
    await this.waitForSlot(result.slot + 1);
    return result;
  }

  /** The program's address on this chain, as localnet announced it: the one PublicKey, so derivations share one memo. */
  get programId(): PublicKey {
    this.program ??= new PublicKey(this.ready.market.programId);
    return this.program;
  }

  async slot(commitment: Commitment = "processed"): Promise<number> {
    return this.call<number>("getSlot", [{ commitment }]);
  }

  async waitForSlot(slot: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.slot()) < slot) {
      if (Date.now() > deadline) throw new Error(`slot ${slot} not reached within ${timeoutMs} ms`);
      await sleep(SLOT_MS / 2);
    }
  }

  async marketConfig(): Promise<MarketConfig> {
    const raw = await this.call<Record<string, string | number>>("localnet_marketConfig");
    const key = (name: string) => new PublicKey(raw[name] as string);
    return {
      programId: key("programId"),
      market: key("market"),
      usdcMint: key("usdcMint"),
      treasury: key("treasury"),
      authority: key("authority"),
      relayer: key("relayer"),
      arbiter: key("arbiter"),
      delegate: key("delegate"),
      faucet: key("faucet"),
      feeBps: raw.feeBps as number,
    };
  }

  /**
   * Stops the node. `graceful` sends SIGINT, on which localnet stops serving and saves its
   * ledger (what Ctrl-C does); otherwise SIGKILL, as a crash would. Either way this waits for
   * the process to end (SIGKILL after 10 s if a graceful stop hangs).
   */
  async stop(options: { graceful?: boolean } = {}): Promise<number | null> {
    for (const connection of this.connections.splice(0)) closeWebSocket(connection);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill(options.graceful ? "SIGINT" : "SIGKILL");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
      const code = await this.exited;
      clearTimeout(timer);
      return code;
    }
    return this.exited;
  }
}

/**
 * web3.js opens a Connection's WebSocket for subscriptions and closes it 500 ms after the last
 * one ends; if the server goes away first, it reconnects forever and keeps this process alive.
 * Closing it with code 1000 (what its own idle close does) ends that. The socket is private, so
 * this reaches in.
 */
function closeWebSocket(connection: Connection): void {
  const socket = (connection as unknown as { _rpcWebSocket?: { close(code?: number): void; setAutoReconnect?(on: boolean): void } })
    ._rpcWebSocket;
  try {
    socket?.setAutoReconnect?.(false);
    socket?.close(1000);
  } catch {
    // not connected
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

/** The development keys in localnet/dev-config.json (public by design; never use them elsewhere). */
export interface DevKeys {
  authority: Keypair;
  relayer: Keypair;
  arbiter: Keypair;
  mintAuthority: Keypair;
  usdcMint: Keypair;
  faucet: Keypair;
  market: {
    minCollateralUsdc: number;
    minPricePerCallUsdc: number;
    escrowGraceSecs: number;
    disputeWindowSecs: number;
    collateralCooldownSecs: number;
  };
}

export function devKeys(path = join(REPO_ROOT, "localnet", "dev-config.json")): DevKeys {
  const config = JSON.parse(readFileSync(path, "utf8")) as {
    keypairs: Record<string, number[]>;
    market: DevKeys["market"];
  };
  const keypair = (name: string): Keypair => {
    const bytes = config.keypairs[name];
    if (!bytes) throw new Error(`${path} has no keypair ${name}`);
    return Keypair.fromSecretKey(Uint8Array.from(bytes));
  };
  return {
    authority: keypair("authority"),
    relayer: keypair("relayer"),
    arbiter: keypair("arbiter"),
    mintAuthority: keypair("mintAuthority"),
    usdcMint: keypair("usdcMint"),
    faucet: keypair("faucet"),
    market: config.market,
  };
}
