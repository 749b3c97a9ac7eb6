// The whole marketplace a dashboard test needs: localnet, the indexer's GraphQL over HTTP, and a
// relayer serving the built dashboard (app/dist) with the indexer's URL.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { startStarterHost, type RunningStarterHost } from "@agent-market/examples";
import { createIndexer, parseConfig, type Indexer } from "@agent-market/indexer";
import { dropDatabase, ensureDatabase, silentLogger } from "@agent-market/service";
import { TestMarket } from "@agent-market/tests/fixtures";
import { startRelayer, writeKeypair, type RunningRelayer } from "@agent-market/tests/relayer";
import { Keypair } from "@solana/web3.js";

export const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");

export interface Stack {
  market: TestMarket;
  relayer: RunningRelayer;
  indexer: Indexer;
  graphqlUrl: string;
  /** On a local chain's dashboard, as npm start runs it: the starter host newcomers list from the browser. */
  starter: RunningStarterHost | null;
  close(): Promise<void>;
}

/**
 * `dashboard` replaces the relayer's dashboard settings; by default the page is told it runs on a
 * local chain (DASHBOARD_LOCALNET), as `npm start` serves it, with npm start's starter host.
 */
export async function startStack(
  dashboard: (localnetRpcUrl: string) => Record<string, string> = () => ({ DASHBOARD_LOCALNET: "true" }),
  chain: { slotMs?: number } = {},
): Promise<Stack> {
  if (!existsSync(join(DIST, "index.html"))) throw new Error("build the dashboard first: npm run build -w @agent-market/app");
  const market = await TestMarket.start(chain);
  const postgres = new URL(process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  postgres.pathname = `/dashboard_${randomBytes(6).toString("hex")}`;
  const databaseUrl = postgres.href;
  await ensureDatabase(databaseUrl);
  const indexer = await createIndexer(
    parseConfig({
      INDEXER_NETWORK: "localnet",
      DEVNET_PROGRAM_ID: market.programId.toBase58(),
      INDEXER_DATABASE_URL: databaseUrl,
      INDEXER_RPC_URL: market.localnet.rpcUrl,
      INDEXER_WEBSOCKET_URL: market.localnet.websocketUrl,
      INDEXER_GAP_CHECK_INTERVAL_MS: "1000",
      INDEXER_FINALITY_INTERVAL_MS: "200",
    }),
    { logger: silentLogger },
  );
  const server: Server = createServer(indexer.yoga);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the indexer has no TCP address");
  const graphqlUrl = `http://127.0.0.1:${address.port}/graphql`;
  const settings = dashboard(market.localnet.rpcUrl);
  let starter: RunningStarterHost | null = null;
  const starterDir = mkdtempSync(join(tmpdir(), "dashboard-starter-"));
  const starterEnv: Record<string, string> = {};
  if (settings.DASHBOARD_LOCALNET === "true") {
    const marketplace = Keypair.generate();
    const token = randomBytes(24).toString("hex");
    starter = await startStarterHost({ marketplaceKey: marketplace.publicKey.toBase58(), keysFile: join(starterDir, "keys.json"), adminToken: token });
    Object.assign(starterEnv, { MARKETPLACE_KEYPAIR: writeKeypair(marketplace), DASHBOARD_STARTER_AGENT_URL: starter.url, DASHBOARD_STARTER_AGENT_TOKEN: token });
  }
  const relayer = await startRelayer(market.localnet, { DASHBOARD_DIR: DIST, INDEXER_GRAPHQL_URL: graphqlUrl, ...starterEnv, ...settings });
  return {
    market,
    relayer,
    indexer,
    graphqlUrl,
    starter,
    async close() {
      await relayer.close();
      await starter?.close();
      rmSync(starterDir, { recursive: true, force: true });
      await new Promise((resolve) => server.close(resolve));
      await indexer.close();
      await market.stop();
      await dropDatabase(databaseUrl).catch(() => {});
    },
  };
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}
