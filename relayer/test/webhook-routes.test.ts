// The /v1/webhooks routes: who may call them (a wallet session, its own endpoints only), what they
// cost the marketplace (endpoints, test sends and writes bounded per wallet and address), the URLs
// they take under each endpoint policy, and an async execution's callback_url, refused before
// anything is charged.
import { strict as assert } from "node:assert";

import { Keypair } from "@solana/web3.js";

import { bearer, errorOf, signIn, startTestRelayer } from "./support.js";
import { webhookFixture } from "./webhook-support.js";

describe("webhook routes", function () {
  this.timeout(60_000);
  const fx = webhookFixture();

  describe("the routes", () => {
    it("creates an endpoint whose secret is shown once, lists it without, and deletes it", async () => {
      const owner = await fx.wallet();
      const created = await fx.createEndpoint(owner.token, fx.receiver.url);
      assert.match(created.id, /^whep_[1-9A-HJ-NP-Za-km-z]+$/);
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      const list = await fx.relayer.app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(owner.token) });
      assert.equal(list.statusCode, 200);
      const listed = list.json() as { object: string; data: Record<string, unknown>[]; has_more: boolean };
      assert.deepEqual(listed.data.map((e) => e.id), [created.id]);
      assert.equal("secret" in listed.data[0]!, false);
      assert.ok(!list.body.includes(created.secret));
      const deleted = await fx.relayer.app.inject({ method: "DELETE", url: `/v1/webhooks/${created.id}`, headers: bearer(owner.token) });
      assert.equal(deleted.statusCode, 200);
      assert.equal((deleted.json() as { id: string }).id, created.id);
      const again = await fx.relayer.app.inject({ method: "DELETE", url: `/v1/webhooks/${created.id}`, headers: bearer(owner.token) });
      assert.equal(errorOf(again).code, "resource_not_found");
    });

    it("takes a wallet session only: none is 401 session_required, an API key 403 api_key_not_allowed", async () => {
      const owner = await fx.wallet();
      for (const [method, url] of [
        ["POST", "/v1/webhooks"],
        ["GET", "/v1/webhooks"],
        ["DELETE", "/v1/webhooks/whep_x"],
        ["POST", "/v1/webhooks/whep_x/test"],
        ["GET", "/v1/webhooks/whep_x/deliveries"],
      ] as const) {
        const payload = method === "POST" ? { url: fx.receiver.url, events: ["execution.failed"] } : undefined;
        const anonymous = await fx.relayer.app.inject({ method, url, ...(payload ? { payload } : {}) });
        assert.equal(anonymous.statusCode, 401, `${method} ${url}`);
        assert.equal(errorOf(anonymous).code, "session_required");
        const withKey = await fx.relayer.app.inject({ method, url, headers: bearer(owner.key_secret), ...(payload ? { payload } : {}) });
        assert.equal(withKey.statusCode, 403, `${method} ${url}`);
        assert.equal(errorOf(withKey).code, "api_key_not_allowed");
      }
    });

    it("answers another wallet's endpoint as absent: 404 resource_not_found, and changes nothing", async () => {
      const owner = await fx.wallet();
      const other = await fx.wallet();
      const created = await fx.createEndpoint(owner.token, fx.receiver.url);
      for (const [method, url] of [
        ["DELETE", `/v1/webhooks/${created.id}`],
        ["POST", `/v1/webhooks/${created.id}/test`],
        ["GET", `/v1/webhooks/${created.id}/deliveries`],
      ] as const) {
        const response = await fx.relayer.app.inject({ method, url, headers: bearer(other.token) });
        assert.equal(response.statusCode, 404, `${method} ${url}`);
        assert.equal(errorOf(response).code, "resource_not_found");
        assert.equal(errorOf(response).param, "webhook_id");
      }
      const theirs = await fx.relayer.app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(other.token) });
      assert.deepEqual((theirs.json() as { data: unknown[] }).data, []);
      const { rows } = await fx.relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1", [created.id]);
      assert.equal(rows[0].n, 0);
    });

    it("refuses URLs outside the endpoint policy with 400 webhook_url_not_allowed, and unknown events", async () => {
      const owner = await fx.wallet();
      for (const url of [
        "ftp://example.com/hooks",
        "not a url",
        "https://user:pass@example.com/hooks",
        "https://example.com/hooks#fragment",
        "http://10.0.0.1/hooks",
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:10.0.0.1]/hooks",
        `https://example.com/${"a".repeat(2100)}`,
      ]) {
        const response = await fx.relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(owner.token), payload: { url, events: ["execution.failed"] } });
        assert.equal(response.statusCode, 400, url);
        const code = url.length > 2048 ? "validation_failed" : "webhook_url_not_allowed";
        assert.equal(errorOf(response).code, code, url);
        assert.equal(errorOf(response).param, "url", url);
      }
      for (const [events, param] of [
        [["execution.exploded"], "events[0]"],
        [[], "events"],
      ] as const) {
        const response = await fx.relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(owner.token), payload: { url: fx.receiver.url, events } });
        assert.equal(response.statusCode, 400);
        assert.equal(errorOf(response).code, "validation_failed");
        assert.equal(errorOf(response).param, param);
      }
    });

    it("takes https only under the public endpoint policy (production)", async () => {
      const production = await startTestRelayer({ ENDPOINT_POLICY: "public" });
      try {
        const token = await signIn(production.app);
        const plain = await production.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: "http://example.com/hooks", events: ["execution.failed"] } });
        assert.equal(plain.statusCode, 400);
        assert.equal(errorOf(plain).code, "webhook_url_not_allowed");
        assert.match(errorOf(plain).message, /must be an https: URL/);
        const loopback = await production.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: "https://127.0.0.1/hooks", events: ["execution.failed"] } });
        assert.equal(errorOf(loopback).code, "webhook_url_not_allowed");
        const ok = await production.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: "https://example.com/hooks", events: ["execution.failed"] } });
        assert.equal(ok.statusCode, 201);
      } finally {
        await production.close();
      }
    });

    it("bounds a wallet to 10 endpoints, even created all at once: the 11th is 409 webhook_limit_reached", async () => {
      const owner = await fx.wallet();
      const responses = await Promise.all(
        Array.from({ length: 14 }, () =>
          fx.relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(owner.token), payload: { url: fx.receiver.url, events: ["execution.failed"] } }),
        ),
      );
      assert.equal(responses.filter((r) => r.statusCode === 201).length, 10);
      for (const refused of responses.filter((r) => r.statusCode !== 201)) {
        assert.equal(refused.statusCode, 409);
        assert.equal(errorOf(refused).code, "webhook_limit_reached");
        assert.equal((errorOf(refused) as { limit?: number }).limit, 10);
      }
      // A deleted endpoint frees its place.
      const first = (responses[0]!.statusCode === 201 ? responses[0]! : responses.find((r) => r.statusCode === 201)!).json() as { id: string };
      await fx.relayer.app.inject({ method: "DELETE", url: `/v1/webhooks/${first.id}`, headers: bearer(owner.token) });
      await fx.createEndpoint(owner.token, fx.receiver.url);
    });

    it("bounds test sends to 20 an hour per endpoint (429 rate_limited), so a thousand calls send 20 requests", async () => {
      const owner = await fx.wallet();
      const created = await fx.createEndpoint(owner.token, fx.receiver.url);
      const statuses: number[] = [];
      let refused: ReturnType<typeof errorOf> | undefined;
      let retry_after: unknown;
      for (let i = 0; i < 25; i += 1) {
        const response = await fx.relayer.app.inject({ method: "POST", url: `/v1/webhooks/${created.id}/test`, headers: bearer(owner.token) });
        statuses.push(response.statusCode);
        if (response.statusCode === 429) {
          refused = errorOf(response);
          retry_after = response.headers["retry-after"];
        }
      }
      assert.deepEqual(statuses, [...Array(20).fill(202), ...Array(5).fill(429)]);
      assert.equal(refused?.code, "rate_limited");
      assert.equal(retry_after, "60");
      const { rows } = await fx.relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1", [created.id]);
      assert.equal(rows[0].n, 20);
    });
    it("counts creations, deletions and test sends per wallet and per address (RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE): churn resets nothing", async () => {
      const limited = await startTestRelayer({ RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE: "3" });
      try {
        const token = await signIn(limited.app);
        const create = () => limited.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: fx.receiver.url, events: ["execution.failed"] } });
        const created = (await create()).json() as { id: string };
        const test = await limited.app.inject({ method: "POST", url: `/v1/webhooks/${created.id}/test`, headers: bearer(token) });
        assert.equal(test.statusCode, 202);
        const deleted = await limited.app.inject({ method: "DELETE", url: `/v1/webhooks/${created.id}`, headers: bearer(token) });
        assert.equal(deleted.statusCode, 200);
        const refused = await create();
        assert.equal(refused.statusCode, 429);
        assert.equal(errorOf(refused).code, "rate_limited");
        assert.ok(Number(refused.headers["retry-after"]) >= 1);
        // Reads are not counted.
        const list = await limited.app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(token) });
        assert.equal(list.statusCode, 200);
      } finally {
        await limited.close();
      }
    });
  });

  describe("callback_url of an async execution", () => {
    it("is refused without Prefer: respond-async, or outside the endpoint policy, before anything is charged", async () => {
      const owner = await fx.wallet();
      const agent = Keypair.generate().publicKey.toBase58();
      const execute = (headers: Record<string, string>, callback_url: string) =>
        fx.relayer.app.inject({
          method: "POST",
          url: `/v1/agents/${agent}/execute`,
          headers: { ...bearer(owner.key_secret), ...headers },
          payload: { task: "t", parameters: {}, callback_url },
        });
      const sync = await execute({}, fx.receiver.url);
      assert.equal(sync.statusCode, 400);
      assert.deepEqual([errorOf(sync).code, errorOf(sync).param], ["validation_failed", "callback_url"]);
      for (const url of ["ftp://example.com/x", "http://10.1.2.3/x", "https://u:p@example.com/x"]) {
        const refused = await execute({ prefer: "respond-async" }, url);
        assert.equal(refused.statusCode, 400, url);
        assert.deepEqual([errorOf(refused).code, errorOf(refused).param], ["webhook_url_not_allowed", "callback_url"], url);
      }
      const { rows } = await fx.relayer.services.db.query("SELECT count(*)::int AS n FROM executions WHERE wallet = $1", [owner.address]);
      assert.equal(rows[0].n, 0);
    });
  });
});
