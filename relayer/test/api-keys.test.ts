import { strict as assert } from "node:assert";

import { Keypair } from "@solana/web3.js";

import { generateApiKey } from "../src/auth/api-key-format.js";
import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

interface KeyBody {
  id: string;
  secret?: string;
  name: string;
  environment: string;
  network: string;
  wallet: string;
  prefix: string;
  last4: string;
  status: string;
  created_at: string;
  last_used_at: string | null;
  execution_count: number;
  spent_usdc: string;
  spending_cap_usdc: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

describe("API keys", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
  });
  after(async () => {
    await relayer.close();
  });

  async function createKey(token: string, payload: Record<string, unknown> = {}): Promise<KeyBody> {
    const response = await relayer.app.inject({
      method: "POST",
      url: "/v1/keys",
      headers: bearer(token),
      payload: { name: "production", environment: "test", ...payload },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as KeyBody;
  }

  const whoami = (authorization?: string) =>
    relayer.app.inject({ method: "GET", url: "/v1/whoami", headers: authorization === undefined ? {} : { authorization } });

  it("creates a key shown once, stored only as a keyed hash", async () => {
    const wallet = Keypair.generate();
    const token = await signIn(relayer.app, wallet);
    const key = await createKey(token, { spending_cap_usdc: "25.000000", expires_at: "2099-01-01T00:00:00Z" });
    assert.match(key.secret!, /^svc_test_[0-9A-Za-z]{36}$/);
    assert.equal(key.prefix, "svc_test_");
    assert.equal(key.last4, key.secret!.slice(-4));
    assert.equal(key.wallet, wallet.publicKey.toBase58());
    assert.equal(key.network, "devnet");
    assert.equal(key.status, "active");
    assert.equal(key.spending_cap_usdc, "25.000000");
    assert.equal(key.spent_usdc, "0.000000");
    assert.equal(key.execution_count, 0);
    assert.equal(key.expires_at, "2099-01-01T00:00:00.000Z");

    const fetched = await relayer.app.inject({ method: "GET", url: `/v1/keys/${key.id}`, headers: bearer(token) });
    assert.equal(fetched.statusCode, 200);
    assert.equal(fetched.json().secret, undefined, "the secret is never shown again");
    const { rows } = await relayer.services.db.query("SELECT * FROM api_keys WHERE id = $1", [key.id]);
    assert.ok(!JSON.stringify(rows[0]).includes(key.secret!.slice(9)), "the database holds no part of the secret but last4");
  });

  it("authenticates the key and records its last use", async () => {
    const token = await signIn(relayer.app);
    const key = await createKey(token);
    const response = await whoami(`Bearer ${key.secret}`);
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().key_id, key.id);
    await relayer.services.authenticator.flushUsage();
    const fetched = (await relayer.app.inject({ method: "GET", url: `/v1/keys/${key.id}`, headers: bearer(token) })).json() as KeyBody;
    assert.ok(fetched.last_used_at !== null && Date.parse(fetched.last_used_at) >= Date.parse(key.created_at));
  });

  it("lists only the wallet's own keys, newest first, with cursor pagination", async () => {
    const token = await signIn(relayer.app);
    const other = await signIn(relayer.app);
    const otherKey = await createKey(other);
    const created: KeyBody[] = [];
    for (let i = 0; i < 5; i += 1) created.push(await createKey(token, { name: `key ${i}` }));
    const ids: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const url = `/v1/keys?limit=2${cursor ? `&starting_after=${cursor}` : ""}`;
      const page = (await relayer.app.inject({ method: "GET", url, headers: bearer(token) })).json() as {
        object: string;
        data: KeyBody[];
        has_more: boolean;
      };
      assert.equal(page.object, "list");
      ids.push(...page.data.map((k) => k.id));
      if (!page.has_more) break;
      cursor = page.data.at(-1)!.id;
    }
    assert.deepEqual(ids, created.map((k) => k.id).reverse());
    assert.ok(!ids.includes(otherKey.id));

    const foreign = await relayer.app.inject({ method: "GET", url: `/v1/keys?starting_after=${otherKey.id}`, headers: bearer(token) });
    assert.equal(foreign.statusCode, 400);
    assert.equal(errorOf(foreign).code, "invalid_cursor");
  });

  it("answers 404 for another wallet's key, to inspect or to revoke", async () => {
    const owner = await signIn(relayer.app);
    const stranger = await signIn(relayer.app);
    const key = await createKey(owner);
    for (const method of ["GET", "DELETE"] as const) {
      const response = await relayer.app.inject({ method, url: `/v1/keys/${key.id}`, headers: bearer(stranger) });
      assert.equal(response.statusCode, 404);
      assert.equal(errorOf(response).code, "resource_not_found");
    }
    assert.equal((await whoami(`Bearer ${key.secret}`)).statusCode, 200, "the stranger's DELETE did not revoke it");
  });

  it("revokes at once: the very next request is refused, on this relayer and on another", async () => {
    const token = await signIn(relayer.app);
    const key = await createKey(token);
    const database = new URL(relayer.services.config.database_url).pathname.slice(1);
    const second = await startTestRelayer(
      { API_KEY_HASH_SECRET: relayer.services.config.api_key_hash_secret.toString("hex") },
      database,
    );
    try {
      const viaSecond = () => second.app.inject({ method: "GET", url: "/v1/whoami", headers: bearer(key.secret!) });
      assert.equal((await whoami(`Bearer ${key.secret}`)).statusCode, 200);
      assert.equal((await viaSecond()).statusCode, 200);
      const revoked = await relayer.app.inject({ method: "DELETE", url: `/v1/keys/${key.id}`, headers: bearer(token) });
      assert.equal(revoked.statusCode, 200);
      assert.equal(revoked.json().status, "revoked");
      for (const response of [await whoami(`Bearer ${key.secret}`), await viaSecond()]) {
        assert.equal(response.statusCode, 401);
        assert.equal(errorOf(response).code, "revoked_api_key");
      }
    } finally {
      await second.close();
    }
  });

  it("refuses an expired key", async () => {
    const token = await signIn(relayer.app);
    const key = await createKey(token);
    await relayer.services.db.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [key.id]);
    const response = await whoami(`Bearer ${key.secret}`);
    assert.equal(response.statusCode, 401);
    assert.equal(errorOf(response).code, "expired_api_key");
    const listed = (await relayer.app.inject({ method: "GET", url: `/v1/keys/${key.id}`, headers: bearer(token) })).json();
    assert.equal(listed.status, "expired");
  });

  it("refuses bad Authorization headers, each with its own code", async () => {
    const wellFormedUnknown = generateApiKey("test").secret;
    const token = await signIn(relayer.app);
    const key = await createKey(token);
    const typo = key.secret!.slice(0, 20) + (key.secret![20] === "a" ? "b" : "a") + key.secret!.slice(21);
    const cases: [string | undefined, string][] = [
      [undefined, "missing_authorization"],
      ["", "malformed_authorization"],
      ["Basic abc", "malformed_authorization"],
      [`Bearer`, "malformed_authorization"],
      [`Bearer  ${key.secret}`, "malformed_authorization"],
      [`bearer${key.secret}`, "malformed_authorization"],
      [`Bearer ${typo}`, "malformed_api_key"],
      ["Bearer svc_test_short", "malformed_api_key"],
      [`Bearer ${wellFormedUnknown}`, "unknown_api_key"],
      [`Bearer ${token}`, "api_key_required"],
    ];
    for (const [authorization, code] of cases) {
      const response = await whoami(authorization);
      assert.equal(response.statusCode, 401, `${authorization}: ${response.body}`);
      assert.equal(errorOf(response).code, code, String(authorization));
    }
  });

  it("refuses a bad checksum before any database lookup", async () => {
    const { secret } = generateApiKey("test");
    const typo = secret.slice(0, -1) + (secret.endsWith("a") ? "b" : "a");
    const queries: string[] = [];
    const original = relayer.services.db.query.bind(relayer.services.db);
    relayer.services.db.query = ((...args: unknown[]) => {
      queries.push(String(args[0]));
      return (original as (...a: unknown[]) => unknown)(...args);
    }) as typeof relayer.services.db.query;
    try {
      const response = await whoami(`Bearer ${typo}`);
      assert.equal(errorOf(response).code, "malformed_api_key");
      assert.deepEqual(queries, []);
      await whoami(`Bearer ${secret}`);
      assert.equal(queries.length, 1, "a well-formed key is looked up");
    } finally {
      relayer.services.db.query = original;
    }
  });

  it("never lets an API key create, list, inspect or revoke keys", async () => {
    const token = await signIn(relayer.app);
    const key = await createKey(token);
    const requests = [
      { method: "POST" as const, url: "/v1/keys", payload: { name: "x", environment: "test" } },
      { method: "GET" as const, url: "/v1/keys" },
      { method: "GET" as const, url: `/v1/keys/${key.id}` },
      { method: "DELETE" as const, url: `/v1/keys/${key.id}` },
    ];
    for (const request of requests) {
      const response = await relayer.app.inject({ ...request, headers: bearer(key.secret!) });
      assert.equal(response.statusCode, 403, `${request.method} ${request.url}`);
      assert.equal(errorOf(response).code, "api_key_not_allowed");
    }
    assert.equal((await whoami(`Bearer ${key.secret}`)).statusCode, 200, "still active");
  });

  it("validates the creation body with parameter paths", async () => {
    const token = await signIn(relayer.app);
    const cases: [Record<string, unknown>, string][] = [
      [{ environment: "test" }, "name"],
      [{ name: "x", environment: "prod" }, "environment"],
      [{ name: "x", environment: "test", spending_cap_usdc: "1.5" }, "spending_cap_usdc"],
      [{ name: "x", environment: "test", spending_cap_usdc: 10 }, "spending_cap_usdc"],
      [{ name: "x", environment: "test", expires_at: "2000-01-01T00:00:00Z" }, "expires_at"],
      [{ name: "x", environment: "test", expires_at: "tomorrow" }, "expires_at"],
    ];
    for (const [payload, param] of cases) {
      const response = await relayer.app.inject({ method: "POST", url: "/v1/keys", headers: bearer(token), payload });
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorOf(response).code, "validation_failed");
      assert.equal(errorOf(response).param, param, JSON.stringify(payload));
    }
  });

  it("refuses live keys when mainnet is not configured", async () => {
    const token = await signIn(relayer.app);
    const response = await relayer.app.inject({
      method: "POST",
      url: "/v1/keys",
      headers: bearer(token),
      payload: { name: "prod", environment: "live" },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(errorOf(response).code, "network_not_configured");
  });

  it("keeps keys, session tokens and signatures out of the logs", async () => {
    const token = await signIn(relayer.app);
    const key = await createKey(token);
    await whoami(`Bearer ${key.secret}`);
    await relayer.app.inject({ method: "GET", url: "/v1/keys", headers: bearer(token) });
    const text = relayer.logs.join("");
    assert.ok(relayer.logs.length > 0, "the app logs");
    assert.ok(!text.includes(key.secret!), "no API key");
    assert.ok(!text.includes(token), "no session token");
    assert.ok(!text.includes(relayer.services.config.api_key_hash_secret.toString("hex")), "no hash secret");
  });
});
