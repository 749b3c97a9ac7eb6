// What the indexer's tests share: a fresh database per test file, a localnet with the market
// (`@agent-market/tests/fixtures`' TestMarket, which sends real program transactions), an indexer
// over both, and a GraphQL helper that goes through `yoga.fetch`.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { dropDatabase, ensureDatabase, silentLogger } from "@agent-market/service";
import { TestMarket, type AgentFixture, type OpenedEscrow, type Wallet } from "@agent-market/tests/fixtures";

import { createIndexer, type Indexer } from "../src/indexer.js";
import { parseConfig, type IndexerConfig } from "../src/config.js";
import { transactionDecoder, type RawTransaction } from "../src/ingest/decoder.js";
import type { DecodedTransaction } from "../src/ingest/event-row.js";

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export function databaseUrl(): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/indexer_test_${randomBytes(6).toString("hex")}`;
  return url.toString();
}

export interface IndexerEnv {
  market: TestMarket;
  databaseUrl: string;
  env: Record<string, string>;
  config: IndexerConfig;
}

export async function startEnv(options: { slotMs?: number; extraEnv?: Record<string, string> } = {}): Promise<IndexerEnv> {
  const market = await TestMarket.start({ slotMs: options.slotMs });
  const url = databaseUrl();
  await ensureDatabase(url);
  const env = {
    INDEXER_NETWORK: "localnet",
    DEVNET_PROGRAM_ID: market.programId.toBase58(),
    INDEXER_DATABASE_URL: url,
    INDEXER_RPC_URL: market.localnet.rpcUrl,
    INDEXER_WEBSOCKET_URL: market.localnet.websocketUrl,
    INDEXER_PORT: "0",
    INDEXER_GAP_CHECK_INTERVAL_MS: "500",
    INDEXER_FINALITY_INTERVAL_MS: "200",
    INDEXER_HELIUS_WEBHOOK_AUTH: "test-webhook-authorization-value",
    ...options.extraEnv,
  };
  return { market, databaseUrl: url, env, config: parseConfig(env) };
}

export async function stopEnv(env: IndexerEnv | undefined): Promise<void> {
  if (!env) return;
  await env.market.stop();
  await dropDatabase(env.databaseUrl).catch(() => {});
}

/** The indexer's decoder of the environment's transactions, at its configured program id. */
export function decoderOf(env: IndexerEnv | undefined): (raw: RawTransaction) => DecodedTransaction {
  return transactionDecoder(env!.config.program_id);
}

/** An indexer that does not ingest by itself: the test hands it transactions. */
export function quietIndexer(env: IndexerEnv, overrides: Partial<IndexerConfig> = {}): Promise<Indexer> {
  return createIndexer({ ...env.config, ...overrides }, { ingest: false, logger: silentLogger });
}

export interface GraphQLAnswer<T = Record<string, unknown>> {
  status: number;
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export async function graphql<T = Record<string, any>>(indexer: Indexer, query: string, variables: Record<string, unknown> = {}): Promise<GraphQLAnswer<T>> {
  const response = await indexer.yoga.fetch("http://indexer.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as GraphQLAnswer<T>;
  return { ...body, status: response.status };
}

/** Data of an answer that must have no errors. */
export async function query<T = Record<string, any>>(indexer: Indexer, text: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await graphql<T>(indexer, text, variables);
  assert.equal(answer.errors, undefined, JSON.stringify(answer.errors));
  return answer.data!;
}

/** getTransaction at confirmed, encoding json: what the live source and the backfill read, and Helius's raw shape. */
export async function rawTransaction(market: TestMarket, signature: string): Promise<RawTransaction> {
  const raw = await market.localnet.call<RawTransaction | null>("getTransaction", [signature, { encoding: "json", commitment: "confirmed", maxSupportedTransactionVersion: 0 }]);
  assert.ok(raw, `${signature} is confirmed`);
  return raw;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface Activity {
  agent: AgentFixture;
  payer: Wallet;
  settled: OpenedEscrow[];
  refunded: OpenedEscrow[];
  open: OpenedEscrow[];
  /** Every program transaction sent, in order. */
  signatures: string[];
}

/** An agent with `settled` settled executions, `refunded` refunded ones (CreatorError) and `open` open ones. */
export async function activity(market: TestMarket, counts: { settled: number; refunded: number; open: number }): Promise<Activity> {
  const agent = await market.agent();
  const payer = await market.payer(100_000_000n);
  const result: Activity = { agent, payer, settled: [], refunded: [], open: [], signatures: [agent.signature] };
  for (let i = 0; i < counts.settled; i++) {
    const escrow = await market.openEscrow(agent, payer);
    result.signatures.push(escrow.signature, await market.settle(escrow, agent, i % 2));
    result.settled.push(escrow);
  }
  for (let i = 0; i < counts.refunded; i++) {
    const escrow = await market.openEscrow(agent, payer);
    result.signatures.push(escrow.signature, await market.sendAsRelayer([market.refundInstruction(escrow, "CreatorError")]));
    result.refunded.push(escrow);
  }
  for (let i = 0; i < counts.open; i++) {
    const escrow = await market.openEscrow(agent, payer);
    result.signatures.push(escrow.signature);
    result.open.push(escrow);
  }
  return result;
}
