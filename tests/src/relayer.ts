// A relayer for the cross-part tests: the real app on a real port, over a fresh PostgreSQL
// database and a localnet, with wallets signed in through the real Sign-In With Solana flow.
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ed25519Sign } from "@agent-market/program";
import { buildApp, createServices, dropDatabase, ensureDatabase, parseConfig, type Services } from "@agent-market/relayer";
import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";
import type { FastifyInstance } from "fastify";

import type { Localnet } from "./localnet.js";

const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface RunningRelayer {
  url: string;
  app: FastifyInstance;
  services: Services & { close(): Promise<void> };
  marketplaceKey: Keypair;
  close(): Promise<void>;
}

export async function startRelayer(localnet: Localnet, env: Record<string, string> = {}): Promise<RunningRelayer> {
  const database = new URL(POSTGRES_URL);
  database.pathname = `/relayer_e2e_${randomBytes(6).toString("hex")}`;
  await ensureDatabase(database.href);
  const marketplaceKey = Keypair.generate();
  const keypairPath = join(mkdtempSync(join(tmpdir(), "relayer-e2e-")), "marketplace.json");
  writeFileSync(keypairPath, JSON.stringify([...marketplaceKey.secretKey]));
  const config = parseConfig({
    DATABASE_URL: database.href,
    API_KEY_HASH_SECRET: randomBytes(32).toString("hex"),
    MARKETPLACE_KEYPAIR: keypairPath,
    DEVNET_RPC_URL: localnet.rpcUrl,
    DEVNET_WS_URL: localnet.websocketUrl,
    ENDPOINT_POLICY: "development",
    PROBE_TIMEOUT_MS: "2000",
    ...env,
  });
  const services = await createServices(config);
  const app = await buildApp(services);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the relayer has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    services,
    marketplaceKey,
    async close() {
      await app.close();
      await services.close();
      await dropDatabase(database.href);
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
  options: { token?: string; body?: unknown } = {},
): Promise<ApiResponse<T>> {
  const response = await fetch(`${relayer.url}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
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
