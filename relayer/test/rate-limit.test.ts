import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { Keypair } from "@solana/web3.js";

import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const agent = () => Keypair.generate().publicKey.toBase58();

function assertRateLimited(response: { statusCode: number; headers: Record<string, unknown>; json(): unknown }): void {
  assert.equal(response.statusCode, 429);
  assert.equal(errorOf(response).code, "rate_limited");
  assert.equal(errorOf(response).type, "rate_limit_error");
  const retryAfter = Number(response.headers["retry-after"]);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${String(response.headers["retry-after"])}`);
}

describe("rate limits", () => {
  describe("unauthenticated routes", () => {
    let relayer: TestRelayer;
    before(async () => {
      relayer = await startTestRelayer({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: "5" });
    });
    after(async () => {
      await relayer.close();
    });

    it("limits unauthenticated routes per address, answering 429 rate_limited with Retry-After", async () => {
      const from = (address: string) => ({ method: "POST" as const, url: "/v1/auth/nonce", remoteAddress: address });
      const wallet = () => ({ wallet: Keypair.generate().publicKey.toBase58() });
      for (let i = 0; i < 5; i += 1) {
        assert.equal((await relayer.app.inject({ ...from("203.0.113.7"), payload: wallet() })).statusCode, 201);
      }
      assertRateLimited(await relayer.app.inject({ ...from("203.0.113.7"), payload: wallet() }));
      assertRateLimited(await relayer.app.inject({ method: "GET", url: "/v1/agents", remoteAddress: "203.0.113.7" }));
      // Another address has its own allowance.
      assert.equal((await relayer.app.inject({ ...from("203.0.113.8"), payload: wallet() })).statusCode, 201);
    });

    it("limits sign-in nonces per wallet, whatever the address", async () => {
      const wallet = Keypair.generate().publicKey.toBase58();
      for (let i = 0; i < 5; i += 1) {
        const response = await relayer.app.inject({
          method: "POST",
          url: "/v1/auth/nonce",
          remoteAddress: `198.51.100.${i + 1}`,
          payload: { wallet },
        });
        assert.equal(response.statusCode, 201);
      }
      assertRateLimited(
        await relayer.app.inject({ method: "POST", url: "/v1/auth/nonce", remoteAddress: "198.51.100.99", payload: { wallet } }),
      );
    });

  });

  describe("listing writes and executions", () => {
    let relayer: TestRelayer;
    before(async () => {
      // Signing in is itself limited per address: this relayer allows plenty of it.
      relayer = await startTestRelayer({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000", RATE_LIMIT_LISTING_WRITES_PER_MINUTE: "3" });
    });
    after(async () => {
      await relayer.close();
    });

    it("limits listing writes per wallet, whatever the address", async () => {
      const token = await signIn(relayer.app);
      const pause = (address: string) =>
        relayer.app.inject({ method: "POST", url: `/v1/agents/${agent()}/pause`, headers: bearer(token), remoteAddress: address });
      for (let i = 0; i < 3; i += 1) assert.equal((await pause(`192.0.2.${i + 1}`)).statusCode, 404);
      assertRateLimited(await pause("192.0.2.50"));
      // Another wallet writes on.
      const other = await signIn(relayer.app);
      const response = await relayer.app.inject({ method: "POST", url: `/v1/agents/${agent()}/pause`, headers: bearer(other) });
      assert.equal(response.statusCode, 404);
    });

    it("limits listing writes per address, whatever the wallet", async () => {
      for (let i = 0; i < 3; i += 1) {
        const token = await signIn(relayer.app);
        const response = await relayer.app.inject({
          method: "POST",
          url: `/v1/agents/${agent()}/retire`,
          headers: bearer(token),
          remoteAddress: "192.0.2.200",
        });
        assert.equal(response.statusCode, 404);
      }
      const token = await signIn(relayer.app);
      assertRateLimited(
        await relayer.app.inject({ method: "POST", url: `/v1/agents/${agent()}/retire`, headers: bearer(token), remoteAddress: "192.0.2.200" }),
      );
    });

    it("counts conformance probes as listing writes, per wallet", async () => {
      // Each probe makes the relayer sign a request to someone's service: a thousand of them are a
      // thousand requests to that service. These are refused before any (a key proof that does not
      // verify), and still counted.
      const token = await signIn(relayer.app);
      const conformance = (address: string) =>
        relayer.app.inject({
          method: "POST",
          url: "/v1/agents/conformance",
          headers: bearer(token),
          remoteAddress: address,
          payload: {
            agent: agent(),
            endpoint: "https://agent.example.com",
            signing_key: agent(),
            input_schema: { type: "object" },
            output_schema: { type: "object" },
            max_execution_secs: 5,
            key_proof: "1".repeat(64),
          },
        });
      for (let i = 0; i < 3; i += 1) {
        const response = await conformance(`192.0.2.${i + 101}`);
        assert.equal(errorOf(response).code, "invalid_key_proof", response.body);
      }
      assertRateLimited(await conformance("192.0.2.150"));
    });

    it("never limits executions by API key: the wallet's USDC is their only bound", async () => {
      const token = await signIn(relayer.app);
      const created = await relayer.app.inject({
        method: "POST",
        url: "/v1/keys",
        headers: bearer(token),
        payload: { name: "unlimited", environment: "test" },
      });
      assert.equal(created.statusCode, 201, created.body);
      const key = (created.json() as { secret: string }).secret;
      for (let i = 0; i < 20; i += 1) {
        const response = await relayer.app.inject({
          method: "POST",
          url: `/v1/agents/${agent()}/execute`,
          headers: bearer(key),
          remoteAddress: "192.0.2.201",
          payload: { task: "echo", parameters: {} },
        });
        assert.notEqual(response.statusCode, 429, `call ${i}: ${response.body}`);
        assert.equal(errorOf(response).code, "resource_not_found");
      }
    });
  });

  describe("dispute evidence", () => {
    let relayer: TestRelayer;
    before(async () => {
      relayer = await startTestRelayer({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000", RATE_LIMIT_DISPUTE_EVIDENCE_PER_MINUTE: "3" });
    });
    after(async () => {
      await relayer.close();
    });
    const evidence = (token: string, address: string) =>
      relayer.app.inject({
        method: "POST",
        url: "/v1/disputes/evidence",
        headers: bearer(token),
        remoteAddress: address,
        payload: { execution_id: "exec_1111111111111111111111", statement: "it answered nothing" },
      });

    it("limits evidence per wallet, whatever the address, and stores nothing past the limit", async () => {
      const token = await signIn(relayer.app);
      for (let i = 0; i < 3; i += 1) assert.equal(errorOf(await evidence(token, `192.0.2.${i + 10}`)).code, "resource_not_found");
      assertRateLimited(await evidence(token, "192.0.2.60"));
      assert.equal(errorOf(await evidence(await signIn(relayer.app), "192.0.2.61")).code, "resource_not_found", "another wallet submits on");
      const { rows } = await relayer.services.db.query("SELECT id FROM dispute_evidence");
      assert.deepEqual(rows, []);
    });

    it("limits evidence per address, whatever the wallet", async () => {
      for (let i = 0; i < 3; i += 1) assert.equal(errorOf(await evidence(await signIn(relayer.app), "192.0.2.202")).code, "resource_not_found");
      assertRateLimited(await evidence(await signIn(relayer.app), "192.0.2.202"));
    });
  });

  describe("dispute reads", () => {
    // A dispute read may cost the relayer a read of the chain, on the RPC quota settlement also
    // spends: its parties may read, each so often a minute, one dispute or a list alike.
    let relayer: TestRelayer;
    before(async () => {
      relayer = await startTestRelayer({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000", RATE_LIMIT_DISPUTE_READS_PER_MINUTE: "3" });
    });
    after(async () => {
      await relayer.close();
    });
    const read = (token: string, address: string, url = "/v1/disputes/exec_1111111111111111111111") =>
      relayer.app.inject({ method: "GET", url, headers: bearer(token), remoteAddress: address });

    it("limits reads of disputes and lists of them together, per wallet, whatever the address", async () => {
      const token = await signIn(relayer.app);
      for (let i = 0; i < 2; i += 1) assert.equal(errorOf(await read(token, `192.0.2.${i + 30}`)).code, "resource_not_found");
      // This relayer has no RPC to scan: the list is 503, and counted.
      assert.equal(errorOf(await read(token, "192.0.2.32", "/v1/disputes?role=payer")).code, "chain_unavailable");
      assertRateLimited(await read(token, "192.0.2.33"));
      assertRateLimited(await read(token, "192.0.2.34", "/v1/disputes?role=payer"));
      assert.equal(errorOf(await read(await signIn(relayer.app), "192.0.2.35")).code, "resource_not_found", "another wallet reads on");
    });

    it("limits dispute reads per address, whatever the wallet, session or not", async () => {
      for (let i = 0; i < 3; i += 1) assert.equal(errorOf(await read(await signIn(relayer.app), "192.0.2.210")).code, "resource_not_found");
      assertRateLimited(await read(await signIn(relayer.app), "192.0.2.210"));
      assertRateLimited(await relayer.app.inject({ method: "GET", url: "/v1/disputes?role=payer", remoteAddress: "192.0.2.210" }));
    });
  });

  describe("shared through Redis", () => {
    it("counts the requests of every relayer of a deployment together", async () => {
      const shared = { REDIS_URL, QUEUE_NAME: `rate-${randomBytes(6).toString("hex")}`, RATE_LIMIT_ANONYMOUS_PER_MINUTE: "4" };
      const first = await startTestRelayer(shared);
      const second = await startTestRelayer(shared);
      try {
        const get = (relayer: TestRelayer, address = "203.0.113.70") =>
          relayer.app.inject({ method: "GET", url: "/v1/openapi.json", remoteAddress: address });
        // A count Redis does not answer in time lets the request pass: connect both first.
        for (const relayer of [first, second]) assert.equal((await get(relayer, "203.0.113.71")).statusCode, 200);
        for (const relayer of [first, second, first, second]) assert.equal((await get(relayer)).statusCode, 200);
        assertRateLimited(await get(first));
        assertRateLimited(await get(second));
      } finally {
        await first.close();
        await second.close();
      }
    });
  });
});
