// What the relayer's tests share: a fresh PostgreSQL database per app, the configuration of a
// test relayer, and a wallet signed in through the real Sign-In With Solana flow.
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";

import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";
import { ed25519Sign, PROGRAM_ID } from "@agent-market/program";
import type { FastifyInstance } from "fastify";
import { createPool, dropDatabase, ensureDatabase } from "@agent-market/service";

import { buildApp } from "../src/app.js";
import type { Db } from "../src/db/database.js";
import type { Services } from "../src/app-services.js";
import { parseConfig } from "../src/config.js";
import { loggerOptions } from "../src/logger.js";
import { createServices } from "../src/services.js";

/** The PostgreSQL server the tests create their databases on. */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export function databaseUrl(name: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.href;
}

export function keypairFile(keypair: Keypair = Keypair.generate()): string {
  const path = join(mkdtempSync(join(tmpdir(), "relayer-test-")), "keypair.json");
  writeFileSync(path, JSON.stringify([...keypair.secretKey]));
  return path;
}

export interface TestRelayer {
  app: FastifyInstance;
  services: Services & { close(): Promise<void> };
  /** Everything the app logged, one JSON line each. */
  logs: string[];
  close(): Promise<void>;
}

/** The environment of a test relayer; devnet points at an address nothing listens on unless given. */
export function testEnv(database_url: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: database_url,
    API_KEY_HASH_SECRET: randomBytes(32).toString("hex"),
    MARKETPLACE_KEYPAIR: keypairFile(),
    RELAYER_KEYPAIR: keypairFile(),
    DEVNET_RPC_URL: "http://127.0.0.1:9",
    // The tests' localnet loads the program at the IDL's address.
    DEVNET_PROGRAM_ID: PROGRAM_ID.toBase58(),
    PUBLIC_URL: "http://localhost:8080",
    ENDPOINT_POLICY: "development",
    LOG_LEVEL: "info",
    // Tests sign in and list from one address far faster than anyone should: only the tests of
    // the limits themselves set them low.
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000000",
    RATE_LIMIT_LISTING_WRITES_PER_MINUTE: "1000000",
    RATE_LIMIT_DISPUTE_EVIDENCE_PER_MINUTE: "1000000",
    RATE_LIMIT_DISPUTE_READS_PER_MINUTE: "1000000",
    RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE: "1000000",
    ...overrides,
  };
}

/** A relayer app over a database of its own (dropped at close), logging into memory. */
export async function startTestRelayer(overrides: Record<string, string> = {}, database?: string): Promise<TestRelayer> {
  const name = database ?? `relayer_test_${randomBytes(6).toString("hex")}`;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  const config = parseConfig(testEnv(url, overrides));
  const services = await createServices(config);
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp(services, loggerOptions("info", stream));
  return {
    app,
    services,
    logs,
    async close() {
      await app.close();
      await services.close();
      if (database === undefined) await dropDatabase(url);
    },
  };
}

/** Signs `wallet` in through POST /v1/auth/nonce and POST /v1/auth/session; returns the session token. */
export async function signIn(app: FastifyInstance, wallet: Keypair = Keypair.generate()): Promise<string> {
  const challenge = await app.inject({ method: "POST", url: "/v1/auth/nonce", payload: { wallet: wallet.publicKey.toBase58() } });
  const { message } = challenge.json() as { message: string };
  const signature = utils.bytes.bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(message)));
  const session = await app.inject({ method: "POST", url: "/v1/auth/session", payload: { message, signature } });
  if (session.statusCode !== 201) throw new Error(`sign-in failed: ${session.body}`);
  return (session.json() as { token: string }).token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Asserts the one error shape and returns the error object. */
export function errorOf(response: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) {
  const body = response.json() as { error: { type: string; code: string; message: string; param?: string; request_id: string } };
  if (!body.error || typeof body.error.code !== "string" || typeof body.error.request_id !== "string") {
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  }
  if (response.headers["request-id"] !== body.error.request_id) throw new Error("Request-Id header differs from request_id");
  return body.error;
}

/** Two relayer processes sharing PostgreSQL: a test relayer's pool and a second pool on its database. */
export interface TwoRelayerProcesses {
  db: Db;
  other: Db;
}

/** Starts two relayer processes before the calling suite and stops them after it. */
export function twoRelayerProcesses(): TwoRelayerProcesses {
  const processes = {} as TwoRelayerProcesses;
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
    processes.db = relayer.services.db;
    processes.other = createPool(String(relayer.services.config.database_url), { max_connections: 4 });
  });
  after(async () => {
    await processes.other.end();
    await relayer.close();
  });
  return processes;
}
