import { strict as assert } from "node:assert";
import { createServer, Socket, type Server } from "node:net";

import { Keypair } from "@solana/web3.js";

import { bearer, errorOf, signIn, startTestRelayer, TEST_POSTGRES_URL, type TestRelayer } from "./support.js";

/** A TCP relay to PostgreSQL that can be cut, standing for a database host that goes away. */
async function relayToPostgres(): Promise<{ url: (database: string) => string; cut(): Promise<void> }> {
  const target = new URL(TEST_POSTGRES_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => socket.destroy());
      socket.on("close", () => sockets.delete(socket));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: (database) => {
      const url = new URL(TEST_POSTGRES_URL);
      url.host = `127.0.0.1:${port}`;
      url.pathname = `/${database}`;
      return url.href;
    },
    async cut() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Addresses of the relayer's own infrastructure: the test RPC (127.0.0.1:9) and database hosts.
const INTERNAL = /127\.0\.0\.1|localhost:|postgres:\/\/|ECONNREFUSED [0-9]/;

describe("what the relayer lets out", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
  });
  after(async () => {
    await relayer.close();
  });

  it("refuses an API key or session token in the query string: 400 credential_in_query", async () => {
    for (const query of [
      "api_key=svc_test_abc",
      "key=svc_live_4Yx7",
      "token=sess_abcdef",
      "access_token=anything",
      "q=svc_test_pasted",
    ]) {
      const response = await relayer.app.inject({ method: "GET", url: `/v1/agents?${query}` });
      assert.equal(response.statusCode, 400, query);
      assert.equal(errorOf(response).code, "credential_in_query", query);
    }
    const plain = await relayer.app.inject({ method: "GET", url: "/v1/keys?limit=2", headers: bearer(await signIn(relayer.app)) });
    assert.equal(plain.statusCode, 200);
  });

  it("keeps query strings out of the logs", async () => {
    const before = relayer.logs.length;
    await relayer.app.inject({ method: "GET", url: "/v1/agents?q=private-search-words&api_key=svc_test_leaked" });
    await relayer.app.inject({ method: "GET", url: "/v1/openapi.json?q=other-private-words" });
    const written = relayer.logs.slice(before).join("");
    assert.ok(written.includes('"url":"/v1/agents?[redacted]"'), written);
    for (const secret of ["private-search-words", "svc_test_leaked", "other-private-words"]) {
      assert.ok(!written.includes(secret), `${secret} logged: ${written}`);
    }
  });

  it("answers chain_unavailable without the RPC's address or the socket's error text", async () => {
    const response = await relayer.app.inject({ method: "GET", url: "/v1/marketplace" });
    assert.equal(response.statusCode, 503);
    assert.equal(errorOf(response).code, "chain_unavailable");
    // Not web3.js's text ("failed to get info about account …: TypeError: fetch failed"), which
    // may carry the RPC's URL.
    assert.equal(errorOf(response).message, "The devnet RPC did not answer.");
    assert.doesNotMatch(response.body, INTERNAL);

    // An execution reads the chain through the relayer's own RPC client.
    const agent = Keypair.generate().publicKey.toBase58();
    await relayer.services.db.query(
      `INSERT INTO agent_listings (network, agent, creator, name, description, tags, input_schema, output_schema, endpoint,
         endpoint_key, signing_key, pricing, max_execution_secs, collateral_usdc, listing_hash, status)
       VALUES ('devnet', $1, $1, 'n', 'd', '{}', '{"type":"object"}', '{}', 'https://agent.example', 'https://agent.example', $1,
         '{"model":"pay_per_use","price_usdc":"0.010000"}', 30, 0, '\\x00', 'active')`,
      [agent],
    );
    const token = await signIn(relayer.app);
    const key = (
      await relayer.app.inject({ method: "POST", url: "/v1/keys", headers: bearer(token), payload: { name: "leaks", environment: "test" } })
    ).json() as { secret: string };
    const executed = await relayer.app.inject({
      method: "POST",
      url: `/v1/agents/${agent}/execute`,
      headers: bearer(key.secret),
      payload: { task: "t", parameters: {} },
    });
    assert.equal(executed.statusCode, 503, executed.body);
    assert.equal(errorOf(executed).code, "chain_unavailable");
    assert.equal(errorOf(executed).message, "The devnet RPC did not answer.");
    assert.doesNotMatch(executed.body, INTERNAL);
  });

  it("reports an unavailable RPC and database on GET /v1/health without their addresses or driver messages", async () => {
    const relay = await relayToPostgres();
    const database = `relayer_test_leaks_${process.pid}_${Date.now()}`;
    const { ensureDatabase, dropDatabase } = await import("@agent-market/service");
    const { databaseUrl } = await import("./support.js");
    await ensureDatabase(databaseUrl(database));
    const relayed = await startTestRelayer({ DATABASE_URL: relay.url(database) }, database);
    try {
      await relay.cut();
      const response = await relayed.app.inject({ method: "GET", url: "/v1/health" });
      assert.equal(response.statusCode, 503);
      const health = response.json() as { database: { status: string; message: string }; networks: { message: string }[] };
      assert.equal(health.database.status, "unavailable");
      assert.doesNotMatch(response.body, INTERNAL);
      assert.doesNotMatch(health.database.message, /terminated|connect|Connection/);
      // The operator finds the cause in the log.
      assert.ok(relayed.logs.some((line) => line.includes("health check failed")));
      // A route whose database does not answer says so in its own words, not the driver's.
      const nonce = await relayed.app.inject({ method: "POST", url: "/v1/auth/nonce", payload: { wallet: "11111111111111111111111111111111" } });
      assert.equal(nonce.statusCode, 503);
      assert.equal(errorOf(nonce).code, "database_unavailable");
      assert.equal(errorOf(nonce).message, "The relayer's database did not answer; no escrow was opened by this request. Retry later.");
      assert.doesNotMatch(nonce.body, INTERNAL);
    } finally {
      await relayed.close().catch(() => undefined);
      await dropDatabase(databaseUrl(database));
    }
  });
});
