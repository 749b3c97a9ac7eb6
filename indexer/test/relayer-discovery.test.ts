// The relayer's discovery, with the indexer running: a listing shows the status, success rate and
// executions the indexer computed from the chain, filters and sorts by them over the whole
// matching set (so a cursor walks one order), and still answers 200, with nulls, when the
// indexer does not answer.
import { strict as assert } from "node:assert";
import { createServer, type Server } from "node:http";

import { dropDatabase, ensureDatabase, freePort, silentLogger } from "@agent-market/service";
import { TestMarket } from "@agent-market/tests/fixtures";
import { execute, listAgent, newPayer, type ListedAgent } from "@agent-market/tests/marketplace";
import { startRelayer, startRelayerWith, type RunningRelayer } from "@agent-market/tests/relayer";

import { parseConfig } from "../src/config.js";
import { createIndexer, type Indexer } from "../src/indexer.js";
import { databaseUrl, query, waitFor } from "./support.js";

interface Health {
  status: string;
  success_rate_24h: number | null;
  executions_24h: number | null;
  latency_p50_secs: number | null;
  latency_p95_secs: number | null;
}
interface Listing {
  id: string;
  health: Health;
}
interface Page {
  data: Listing[];
  has_more: boolean;
}

async function get<T>(relayer: RunningRelayer, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${relayer.url}${path}`);
  return { status: response.status, body: (await response.json()) as T };
}

describe("discovery with the indexer's figures", function () {
  this.timeout(240_000);
  let market: TestMarket | undefined;
  let relayer: RunningRelayer | undefined;
  let blind: RunningRelayer | undefined;
  let indexer: Indexer | undefined;
  let server: Server | undefined;
  const agents: ListedAgent[] = [];
  const url = databaseUrl();

  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await indexer?.close();
    await Promise.all(agents.map((agent) => agent.server.close()));
    await blind?.close();
    await relayer?.close();
    await market?.stop();
    await dropDatabase(url).catch(() => {});
  });

  it("shows each agent's status and success rate, filters and sorts by them, and answers with nulls without the indexer", async () => {
    market = await TestMarket.start();
    await ensureDatabase(url);
    indexer = await createIndexer(
      parseConfig({
        INDEXER_NETWORK: "localnet",
        INDEXER_DATABASE_URL: url,
        INDEXER_RPC_URL: market.localnet.rpcUrl,
        INDEXER_WEBSOCKET_URL: market.localnet.websocketUrl,
        INDEXER_GAP_CHECK_INTERVAL_MS: "1000",
        INDEXER_FINALITY_INTERVAL_MS: "200",
      }),
      { logger: silentLogger },
    );
    server = createServer(indexer.yoga);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const indexerUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/graphql`;
    relayer = await startRelayer(market.localnet, { DEVNET_INDEXER_URL: indexerUrl });

    const good = await listAgent(market, relayer);
    const bad = await listAgent(market, relayer);
    const idle = await listAgent(market, relayer);
    agents.push(good, bad, idle);
    // Listed while well (the relayer probes at listing), failing since.
    bad.server.behaviour = "invalid_output";
    const payer = await newPayer(market, relayer, 50_000_000n);
    for (const agent of [good, good, good, bad, bad]) await execute(relayer, payer, agent.address);
    const [goodId, badId, idleId] = [good, bad, idle].map((agent) => agent.address.toBase58()) as [string, string, string];
    await waitFor("every execution, closed, in the indexer", async () => {
      const data = await query(indexer!, `{ agents(first: 10) { nodes { address stats(window: H24) { settled refunded { total } } } } }`);
      const closed = (data.agents.nodes as { stats: { settled: number; refunded: { total: number } } }[]).reduce(
        (sum, node) => sum + node.stats.settled + node.stats.refunded.total,
        0,
      );
      return closed === 5;
    }, 60_000);

    // The relayer reads a snapshot of the indexer at most every few seconds.
    const listed = await waitFor(
      "the listing showing the indexer's figures",
      async () => {
        const { status, body } = await get<Page>(relayer!, "/v1/agents");
        assert.equal(status, 200);
        const byId = new Map(body.data.map((listing) => [listing.id, listing.health]));
        return byId.get(goodId)?.executions_24h === 3 && byId.get(badId)?.executions_24h === 2 ? byId : undefined;
      },
      30_000,
    );
    assert.equal(listed.get(goodId)!.status, "operational");
    assert.equal(listed.get(goodId)!.success_rate_24h, 1);
    assert.equal(typeof listed.get(goodId)!.latency_p50_secs, "number");
    assert.deepEqual([listed.get(badId)!.status, listed.get(badId)!.success_rate_24h], ["down", 0]);
    assert.deepEqual(listed.get(idleId), {
      status: "no_data",
      success_rate_24h: null,
      executions_24h: 0,
      latency_p50_secs: null,
      latency_p95_secs: null,
    });
    const one = await get<Listing>(relayer, `/v1/agents/${goodId}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.health, listed.get(goodId));

    const ids = (page: Page) => page.data.map((listing) => listing.id);
    assert.deepEqual(ids((await get<Page>(relayer, "/v1/agents?health=operational")).body), [goodId]);
    assert.deepEqual(ids((await get<Page>(relayer, "/v1/agents?health=down")).body), [badId]);
    assert.deepEqual(ids((await get<Page>(relayer, "/v1/agents?min_success_rate=0.95")).body), [goodId]);
    assert.deepEqual(ids((await get<Page>(relayer, "/v1/agents?sort=success_rate")).body), [goodId, badId, idleId]);
    // A cursor walks the ranked order, not the newest-first one.
    const first = (await get<Page>(relayer, "/v1/agents?sort=success_rate&limit=1")).body;
    assert.deepEqual([ids(first), first.has_more], [[goodId], true]);
    const second = (await get<Page>(relayer, `/v1/agents?sort=success_rate&limit=1&starting_after=${goodId}`)).body;
    assert.deepEqual([ids(second), second.has_more], [[badId], true]);
    const third = (await get<Page>(relayer, `/v1/agents?sort=success_rate&limit=1&starting_after=${badId}`)).body;
    assert.deepEqual([ids(third), third.has_more], [[idleId], false]);
    const badSort = await get<{ error: { code: string; param: string } }>(relayer, "/v1/agents?sort=rating");
    assert.equal(badSort.status, 400);
    assert.equal(badSort.body.error.code, "validation_failed");

    // A relayer of the same database whose indexer does not answer: still 200, with nulls.
    blind = await startRelayerWith({ ...relayer.env, DEVNET_INDEXER_URL: `http://127.0.0.1:${await freePort()}/graphql` }, { dropDatabase: false });
    const without = await get<Page>(blind, "/v1/agents");
    assert.equal(without.status, 200);
    assert.equal(without.body.data.length, 3);
    for (const listing of without.body.data) {
      assert.deepEqual(listing.health, { status: "unknown", success_rate_24h: null, executions_24h: null, latency_p50_secs: null, latency_p95_secs: null });
    }
    const ranked = await get<Page>(blind, "/v1/agents?sort=success_rate");
    assert.deepEqual([ranked.status, ranked.body.data.length], [200, 3]);
    assert.equal((await get<Listing>(blind, `/v1/agents/${goodId}`)).body.health.status, "unknown");
  });
});
