// A relayer for the cross-part tests: the real app on a real port, over a fresh PostgreSQL
// database and a localnet, with wallets signed in through the real Sign-In With Solana flow.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";

import { ed25519Sign } from "@agent-market/program";
import {
  buildApp,
  createServices,
  loggerOptions,
  parseConfig,
  type ReconcileReport,
  type RunningServices,
} from "@agent-market/relayer";
import { dropDatabase, ensureDatabase } from "@agent-market/service";
import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";
import type { FastifyInstance } from "fastify";

import { devKeys, sleep, type Localnet } from "./localnet.js";

const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface RunningRelayer {
  url: string;
  app: FastifyInstance;
  services: RunningServices;
  env: Record<string, string>;
  marketplaceKey: Keypair;
  /** What the app logged at warn level and above, one JSON line each. */
  logs: string[];
  close(): Promise<void>;
}


export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export function writeKeypair(keypair: Keypair): string {
  const path = join(mkdtempSync(join(tmpdir(), "relayer-e2e-")), "keypair.json");
  writeFileSync(path, JSON.stringify([...keypair.secretKey]));
  return path;
}

/**
 * The environment of a relayer over `localnet` with a database of its own (created here), BullMQ
 * on the local Redis under a queue of its own, and the development relayer key.
 */
export async function relayerEnv(localnet: Localnet, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const database = new URL(POSTGRES_URL);
  database.pathname = `/relayer_e2e_${randomBytes(6).toString("hex")}`;
  await ensureDatabase(database.href);
  return {
    DATABASE_URL: database.href,
    API_KEY_HASH_SECRET: randomBytes(32).toString("hex"),
    MARKETPLACE_KEYPAIR: writeKeypair(Keypair.generate()),
    RELAYER_KEYPAIR: writeKeypair(devKeys().relayer),
    DEVNET_RPC_URL: localnet.rpcUrl,
    DEVNET_PROGRAM_ID: localnet.programId.toBase58(),
    DEVNET_WS_URL: localnet.websocketUrl,
    ENDPOINT_POLICY: "development",
    PROBE_TIMEOUT_MS: "2000",
    REDIS_URL,
    QUEUE_NAME: `relayer-e2e-${randomBytes(6).toString("hex")}`,
    INSTANCE_TIMEOUT_SECS: "2",
    // The tests sign in and list from one address far faster than any client should.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000000",
    RATE_LIMIT_LISTING_WRITES_PER_MINUTE: "1000000",
    RATE_LIMIT_DISPUTE_EVIDENCE_PER_MINUTE: "1000000",
    RATE_LIMIT_DISPUTE_READS_PER_MINUTE: "1000000",
    RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE: "1000000",
    ...(process.env.BATCH_OPENS ? { BATCH_OPENS: process.env.BATCH_OPENS } : {}),
    ...(process.env.BATCH_REFUNDS ? { BATCH_REFUNDS: process.env.BATCH_REFUNDS } : {}),
    ...env,
  };
}

/**
 * Opens and refunds one transaction each (a settlement is a settle_batch of one whenever its
 * agent has nothing else ready), for the files that count one execution's transactions.
 */
export const ONE_BY_ONE = { BATCH_OPENS: "false", BATCH_REFUNDS: "false" } as const;

/** The relayer app in this process, listening on a free port, its job workers running. */
export async function startRelayer(localnet: Localnet, env: Record<string, string> = {}): Promise<RunningRelayer> {
  return startRelayerWith(await relayerEnv(localnet, env));
}

export async function startRelayerWith(env: Record<string, string>, options: { dropDatabase?: boolean } = {}): Promise<RunningRelayer> {
  const database = new URL(env.DATABASE_URL!);
  const config = parseConfig(env);
  const marketplaceKey = Keypair.fromSecretKey(config.networks.devnet!.marketplace_signing_key);
  const services = await createServices(config);
  await services.startWorkers();
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp(services, loggerOptions("warn", stream));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the relayer has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    services,
    env,
    marketplaceKey,
    logs,
    async close() {
      await app.close();
      await services.close();
      if (options.dropDatabase ?? true) await dropDatabase(database.href);
    },
  };
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** One JSON call to the relayer. */
export async function api<T = Record<string, unknown>>(
  relayer: { url: string },
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const response = await fetch(`${relayer.url}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return { status: response.status, body: (await response.json()) as T, headers: response.headers };
}

/** Signs `wallet` in and returns its session token. */
export async function signIn(relayer: { url: string }, wallet: Keypair): Promise<string> {
  const challenge = await api<{ message: string }>(relayer, "POST", "/v1/auth/nonce", {
    body: { wallet: wallet.publicKey.toBase58() },
  });
  const signature = utils.bytes.bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(challenge.body.message)));
  const session = await api<{ token: string }>(relayer, "POST", "/v1/auth/session", {
    body: { message: challenge.body.message, signature },
  });
  if (session.status !== 201) throw new Error(`sign-in failed: ${JSON.stringify(session.body)}`);
  return session.body.token;
}

/** The `code` of an error answer, after checking the one error shape. */
export function errorCode(response: ApiResponse): string {
  const error = (response.body as { error?: { code?: unknown; request_id?: unknown } }).error;
  if (!error || typeof error.code !== "string" || error.request_id !== response.headers.get("request-id")) {
    throw new Error(`not an error answer: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return error.code;
}

/**
 * The relayer's reconciliation of devnet, asked again while it finds differences (executions
 * still finishing) for up to `wait_ms`; then none must be left. With `escrows_closed`, it also
 * waits for every escrow the relayer opened to be closed, and names the unfinished executions if
 * one is not. The report, for further checks.
 */
export async function expectReconciled(relayer: RunningRelayer, wait_ms = 20_000, escrows_closed = false): Promise<ReconcileReport> {
  const deadline = Date.now() + wait_ms;
  const done = (r: ReconcileReport) => r.differences.length === 0 && (!escrows_closed || r.open_escrows_on_chain === 0);
  let report = await relayer.services.reconcile("devnet");
  while (!done(report) && Date.now() < deadline) {
    await sleep(250);
    report = await relayer.services.reconcile("devnet");
  }
  assert.deepEqual(report.differences, [], "reconciliation finds no difference");
  if (escrows_closed && report.open_escrows_on_chain !== 0) {
    const { rows } = await relayer.services.db.query<{ id: string; state: string; updated_at: Date }>(
      "SELECT id, state, updated_at FROM executions WHERE network = 'devnet' AND state NOT IN ('settled', 'refunded', 'failed')",
    );
    assert.fail(`${report.open_escrows_on_chain} escrow(s) still open after ${wait_ms} ms; unfinished executions: ${JSON.stringify(rows)}`);
  }
  return report;
}
