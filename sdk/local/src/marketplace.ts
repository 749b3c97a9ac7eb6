// The whole marketplace on one machine: localnet (the local chain), the relayer (as its own
// process), the example agents registered on-chain with collateral and listed, and a test wallet
// funded with USDC, an allowance and a `svc_test_` key. Every step is idempotent and its results
// are kept in a data folder, so a restart finds the same chain, database, agents and key.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { agentPda, ed25519Sign, listingHash, registerAgentInstruction, type ListingDocument } from "@agent-market/program";
import { exampleAgents, type RunningAgent } from "@agent-market/examples";
import { utils } from "@coral-xyz/anchor";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, sendAndConfirmTransaction } from "@solana/web3.js";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const USDC = 1_000_000n;

export interface LocalMarketplaceOptions {
  /** Where the chain's ledger, the database, the keys and the demo state live. */
  data_dir: string;
  rpc_port: number;
  relayer_port: number;
  /** First of the ports the example agents listen on (one each, in order). */
  agent_port: number;
  slot_ms: number;
  /** A PostgreSQL server; the embedded PGlite database in the data folder when left out. */
  database_url?: string;
  /** BullMQ's Redis; in-process jobs when left out. */
  redis_url?: string;
  localnet_binary?: string;
  /** Extra environment of the relayer process. */
  relayer_env?: Record<string, string>;
  /** Options of the relayer's node process (a profiler's, say). */
  relayer_node_options?: string[];
  log: (line: string) => void;
}

export interface LocalMarketplace {
  rpc_url: string;
  relayer_url: string;
  agents: { slug: string; address: string; url: string; listing: ListingDocument }[];
  wallet: Keypair;
  api_key: string;
  processes: { localnet: ChildProcess; relayer: ChildProcess };
  /** The relayer's environment, for its other commands (agent-market-reconcile). */
  relayer_env: Record<string, string>;
  stop(): Promise<void>;
}

interface State {
  api_key?: string;
  api_key_hash_secret: string;
  agent_ids: Record<string, string>;
  funded?: boolean;
}

/** The localnet binary cargo built: the optimised one if there is one, else the debug one. */
export function localnetBinary(): string {
  const target = process.env.CARGO_TARGET_DIR || join(homedir(), ".cache", "agent-market", "target");
  const release = join(target, "host-release", "localnet");
  return existsSync(release) ? release : join(target, "debug", "localnet");
}

function keypairAt(path: string): Keypair {
  if (existsSync(path)) return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(path, "utf8")) as number[]));
  const keypair = Keypair.generate();
  writeFileSync(path, JSON.stringify([...keypair.secretKey]), { mode: 0o600 });
  return keypair;
}

function devKeypair(name: string): Keypair {
  const config = JSON.parse(readFileSync(join(REPO_ROOT, "localnet", "dev-config.json"), "utf8")) as {
    keypairs: Record<string, number[]>;
  };
  return Keypair.fromSecretKey(Uint8Array.from(config.keypairs[name]!));
}

/** Spawns `command`, resolving once `ready(line)` holds for a line of its stdout or stderr. */
function spawnUntil(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready: (line: string) => boolean,
  what: string,
): Promise<ChildProcess> {
  const child = spawn(command, args, { env, cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let tail = "";
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within 60 s:\n${tail}`)), 60_000);
    const onLine = (line: string) => {
      tail = `${tail}${line}\n`.slice(-4000);
      if (ready(line)) {
        clearTimeout(timer);
        resolvePromise(child);
      }
    };
    createInterface({ input: child.stdout! }).on("line", onLine);
    createInterface({ input: child.stderr! }).on("line", onLine);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${signal ?? code}) while starting:\n${tail}`));
    });
  });
}

/** Waits until the relayer answers HTTP (its migrations and the embedded database come first). */
async function untilServing(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the relayer exited (${child.exitCode}) while starting`);
    try {
      if ((await fetch(`${base}/v1/openapi.json`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("the relayer did not answer within 60 s");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One JSON-RPC call to localnet (its `localnet_` development methods included). */
export async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function api<T>(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function signIn(base: string, wallet: Keypair): Promise<string> {
  const challenge = await api<{ message: string }>(base, "POST", "/v1/auth/nonce", { wallet: wallet.publicKey.toBase58() });
  const signature = utils.bytes.bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(challenge.body.message)));
  const session = await api<{ token: string }>(base, "POST", "/v1/auth/session", { message: challenge.body.message, signature });
  if (session.status !== 201) throw new Error(`sign-in failed: ${JSON.stringify(session.body)}`);
  return session.body.token;
}

async function airdrop(connection: Connection, to: PublicKey, sol: number): Promise<void> {
  const latest = await connection.getLatestBlockhash();
  const signature = await connection.requestAirdrop(to, sol * LAMPORTS_PER_SOL);
  await connection.confirmTransaction({ signature, ...latest }, "confirmed");
}

export async function startLocalMarketplace(options: LocalMarketplaceOptions): Promise<LocalMarketplace> {
  const { data_dir, log } = options;
  mkdirSync(data_dir, { recursive: true });
  const statePath = join(data_dir, "state.json");
  const state: State = existsSync(statePath)
    ? (JSON.parse(readFileSync(statePath, "utf8")) as State)
    : { api_key_hash_secret: randomBytes(32).toString("hex"), agent_ids: {} };
  const save = () => writeFileSync(statePath, JSON.stringify(state, null, 2), { mode: 0o600 });
  save();

  const binary = options.localnet_binary ?? localnetBinary();
  if (!existsSync(binary)) throw new Error(`${binary} does not exist: run \`npm run build\` first`);
  log(`starting localnet on 127.0.0.1:${options.rpc_port} (ledger in ${join(data_dir, "ledger")})`);
  const localnet = await spawnUntil(
    binary,
    ["--port", String(options.rpc_port), "--slot-ms", String(options.slot_ms), "--ledger", join(data_dir, "ledger")],
    process.env,
    (line) => line.startsWith("{") && line.includes("rpcUrl"),
    "localnet",
  );
  const rpc_url = `http://127.0.0.1:${options.rpc_port}`;
  const connection = new Connection(rpc_url, { commitment: "confirmed", wsEndpoint: `ws://127.0.0.1:${options.rpc_port + 1}` });
  (connection as unknown as { _disableBlockhashCaching: boolean })._disableBlockhashCaching = true;

  const relayerKeypairPath = join(data_dir, "relayer.json");
  writeFileSync(relayerKeypairPath, JSON.stringify([...devKeypair("relayer").secretKey]), { mode: 0o600 });
  const marketplaceKey = keypairAt(join(data_dir, "marketplace.json"));
  const relayer_url = `http://127.0.0.1:${options.relayer_port}`;
  log(`starting the relayer on ${relayer_url} (${options.database_url ? "PostgreSQL" : "embedded PGlite"}, ${options.redis_url ? "BullMQ" : "in-process jobs"})`);
  const relayer_env: Record<string, string> = {
    RELAYER_PORT: String(options.relayer_port),
    PUBLIC_URL: `http://localhost:${options.relayer_port}`,
    ...(options.database_url ? { DATABASE_URL: options.database_url } : { EMBEDDED_DATABASE_DIR: join(data_dir, "pgdata") }),
    ...(options.redis_url ? { REDIS_URL: options.redis_url } : {}),
    API_KEY_HASH_SECRET: state.api_key_hash_secret,
    MARKETPLACE_KEYPAIR: join(data_dir, "marketplace.json"),
    RELAYER_KEYPAIR: relayerKeypairPath,
    DEVNET_RPC_URL: rpc_url,
    ENDPOINT_POLICY: "development",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    ...options.relayer_env,
  };
  const relayer = spawn(process.execPath, [...(options.relayer_node_options ?? []), join(REPO_ROOT, "relayer", "dist", "main.js")], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ...relayer_env },
  });
  try {
    await untilServing(relayer_url, relayer);
  } catch (error) {
    relayer.kill("SIGKILL");
    localnet.kill("SIGTERM");
    throw error;
  }

  const running: RunningAgent[] = [];
  const stop = async () => {
    await Promise.all(running.map((agent) => agent.close().catch(() => undefined)));
    const exited = (child: ChildProcess) =>
      child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once("exit", () => r()));
    relayer.kill("SIGTERM");
    await exited(relayer);
    localnet.kill("SIGTERM");
    await exited(localnet);
  };

  try {
    const creator = keypairAt(join(data_dir, "creator.json"));
    const wallet = keypairAt(join(data_dir, "wallet.json"));
    const slugs = Object.keys(exampleAgents) as (keyof typeof exampleAgents)[];
    if (!state.funded) {
      log("funding the creator and the test wallet (SOL for fees, test USDC)");
      await airdrop(connection, creator.publicKey, 10);
      await airdrop(connection, wallet.publicKey, 10);
      await rpc(rpc_url, "localnet_mintUsdc", [creator.publicKey.toBase58(), Number(BigInt(slugs.length) * 100n * USDC)]);
      await rpc(rpc_url, "localnet_mintUsdc", [wallet.publicKey.toBase58(), Number(100n * USDC)]);
      state.funded = true;
      save();
    }

    const market = await api<{ networks: { usdc_mint: string; minimum_collateral_usdc: string }[] }>(relayer_url, "GET", "/v1/marketplace");
    const usdcMint = new PublicKey(market.body.networks[0]!.usdc_mint);
    const creatorToken = getAssociatedTokenAddressSync(usdcMint, creator.publicKey);
    const creatorSession = await signIn(relayer_url, creator);
    const agents: LocalMarketplace["agents"] = [];
    for (const [i, slug] of slugs.entries()) {
      const example = exampleAgents[slug];
      const signing = keypairAt(join(data_dir, `agent-${slug}.json`));
      const agent = await example.start({
        signingKey: signing.secretKey,
        marketplaceKey: marketplaceKey.publicKey.toBase58(),
        port: options.agent_port + i,
      });
      running.push(agent);
      state.agent_ids[slug] ??= utils.bytes.bs58.encode(randomBytes(16));
      save();
      const agentId = utils.bytes.bs58.decode(state.agent_ids[slug]!);
      const address = agentPda(agentId);
      if (!(await connection.getAccountInfo(address))) {
        log(`registering the ${slug} agent on-chain with 100 USDC of collateral`);
        const transaction = new Transaction().add(
          registerAgentInstruction({
            creator: creator.publicKey,
            agentId,
            creatorTokenAccount: creatorToken,
            payoutAccount: creatorToken,
            usdcMint,
            terms: {
              signingKey: signing.publicKey.toBytes(),
              endpoint: agent.url,
              listingHash: listingHash(example.listing),
              pricing: { kind: "PayPerUse", priceUsdc: slug === "echo" ? 10_000n : 50_000n },
              maxExecutionSecs: 30,
            },
            collateralUsdc: 100n * USDC,
          }),
        );
        await sendAndConfirmTransaction(connection, transaction, [creator]);
      }
      const listed = await api(relayer_url, "GET", `/v1/agents/${address.toBase58()}`);
      if (listed.status === 404) {
        log(`listing the ${slug} agent (conformance probe against ${agent.url})`);
        const created = await api(relayer_url, "POST", "/v1/agents", {
          agent: address.toBase58(),
          ...example.listing,
          endpoint: agent.url,
          signing_key: signing.publicKey.toBase58(),
          pricing: { model: "pay_per_use", price_usdc: slug === "echo" ? "0.010000" : "0.050000" },
        }, creatorSession);
        if (created.status !== 201) throw new Error(`listing ${slug} failed: ${JSON.stringify(created.body)}`);
      }
      agents.push({ slug, address: address.toBase58(), url: agent.url, listing: example.listing });
    }

    const walletSession = await signIn(relayer_url, wallet);
    if (!state.api_key) {
      log("creating the test wallet's svc_test_ key and its 50 USDC allowance");
      const key = await api<{ secret: string }>(relayer_url, "POST", "/v1/keys", { name: "local demo", environment: "test" }, walletSession);
      state.api_key = key.body.secret;
      save();
      const allowance = await api<{ transaction: string }>(
        relayer_url,
        "POST",
        "/v1/wallet/allowance",
        { network: "devnet", amount_usdc: "50.000000" },
        walletSession,
      );
      const transaction = Transaction.from(Buffer.from(allowance.body.transaction, "base64"));
      transaction.partialSign(wallet);
      const signature = await connection.sendRawTransaction(transaction.serialize());
      const latest = await connection.getLatestBlockhash();
      await connection.confirmTransaction({ signature, ...latest }, "confirmed");
    }

    return { rpc_url, relayer_url, agents, wallet, api_key: state.api_key, processes: { localnet, relayer }, relayer_env, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
