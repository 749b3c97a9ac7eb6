import { strict as assert } from "node:assert";

import { ERROR_CODES } from "../src/errors.js";
import { paramPath } from "../src/app.js";
import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

describe("API conventions", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer({ BODY_LIMIT_BYTES: "2048" });
  });
  after(async () => {
    await relayer.close();
  });

  it("puts a Request-Id on every response, success or error, unique per request", async () => {
    const ok = await relayer.app.inject({ method: "GET", url: "/v1/openapi.json" });
    const missing = await relayer.app.inject({ method: "GET", url: "/v1/nothing-here" });
    assert.match(String(ok.headers["request-id"]), /^req_[1-9A-HJ-NP-Za-km-z]+$/);
    assert.notEqual(ok.headers["request-id"], missing.headers["request-id"]);
    assert.equal(missing.statusCode, 404);
    assert.equal(errorOf(missing).code, "route_not_found");
    assert.equal(errorOf(missing).type, "not_found_error");
  });

  it("answers invalid JSON with 400 invalid_json", async () => {
    const token = await signIn(relayer.app);
    for (const payload of ["{", "{\"name\":", "nul", "[1,]"]) {
      const response = await relayer.app.inject({
        method: "POST",
        url: "/v1/keys",
        headers: { ...bearer(token), "content-type": "application/json" },
        payload,
      });
      assert.equal(response.statusCode, 400, payload);
      assert.equal(errorOf(response).code, "invalid_json", payload);
    }
  });

  it("answers a body over the limit with 413 body_too_large", async () => {
    const response = await relayer.app.inject({
      method: "POST",
      url: "/v1/auth/nonce",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ wallet: "x".repeat(4096) }),
    });
    assert.equal(response.statusCode, 413);
    assert.equal(errorOf(response).code, "body_too_large");
  });

  it("accepts only JSON bodies: text/plain and forms are 415 (no simple cross-site posts)", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const response = await relayer.app.inject({
        method: "POST",
        url: "/v1/auth/nonce",
        headers: { "content-type": type },
        payload: "wallet=x",
      });
      assert.equal(response.statusCode, 415, type);
      assert.equal(errorOf(response).code, "unsupported_media_type");
    }
  });

  it("names the parameter path of a schema violation", async () => {
    assert.equal(paramPath("/tags/0"), "tags[0]");
    assert.equal(paramPath("/pricing", "price_usdc"), "pricing.price_usdc");
    assert.equal(paramPath("", "wallet"), "wallet");
    const token = await signIn(relayer.app);
    const response = await relayer.app.inject({
      method: "GET",
      url: "/v1/keys?limit=1000",
      headers: bearer(token),
    });
    assert.equal(response.statusCode, 400);
    assert.equal(errorOf(response).param, "limit");
    assert.match(errorOf(response).message, /querystring limit/);
  });

  it("answers 503 chain_unavailable, not 500, when a network's RPC is down", async () => {
    const response = await relayer.app.inject({ method: "GET", url: "/v1/marketplace" });
    assert.equal(response.statusCode, 503);
    assert.equal(errorOf(response).code, "chain_unavailable");
    const listing = await relayer.app.inject({ method: "GET", url: "/v1/agents" });
    assert.equal(listing.statusCode, 503);
  });

  it("reports itself degraded on GET /v1/health, naming the network whose RPC is down", async () => {
    const response = await relayer.app.inject({ method: "GET", url: "/v1/health" });
    assert.equal(response.statusCode, 503);
    const health = response.json() as {
      status: string;
      database: { status: string };
      queue: { status: string };
      networks: { name: string; status: string; relayer: string; message?: string }[];
    };
    assert.equal(health.status, "degraded");
    assert.deepEqual([health.database.status, health.queue.status], ["ok", "ok"]);
    assert.equal(health.networks.length, 1);
    assert.deepEqual([health.networks[0]!.name, health.networks[0]!.status], ["devnet", "unavailable"]);
    assert.equal(health.networks[0]!.relayer, relayer.services.config.networks.devnet!.relayer_keypair.publicKey.toBase58());
    assert.ok(health.networks[0]!.message);
  });

  it("reports the job queue unavailable on GET /v1/health while Redis does not answer", async () => {
    const withoutRedis = await startTestRelayer({ REDIS_URL: "redis://127.0.0.1:9" });
    try {
      const response = await withoutRedis.app.inject({ method: "GET", url: "/v1/health" });
      assert.equal(response.statusCode, 503);
      const health = response.json() as { database: { status: string }; queue: { status: string; message: string } };
      assert.equal(health.database.status, "ok");
      assert.deepEqual(health.queue, { status: "unavailable", message: "no answer in 2000 ms" });
    } finally {
      await withoutRedis.close();
    }
  });

  it("answers network_not_configured for a network this relayer does not serve", async () => {
    const response = await relayer.app.inject({ method: "GET", url: "/v1/agents?network=mainnet" });
    assert.equal(response.statusCode, 400);
    assert.equal(errorOf(response).code, "network_not_configured");
  });

  it("serves an OpenAPI 3.1 document generated from the route schemas", async () => {
    const response = await relayer.app.inject({ method: "GET", url: "/v1/openapi.json" });
    assert.equal(response.statusCode, 200);
    const doc = response.json() as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    };
    assert.equal(doc.openapi, "3.1.0");
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    for (const route of [
      "GET /v1/marketplace",
      "POST /v1/auth/nonce",
      "POST /v1/auth/session",
      "GET /v1/auth/session",
      "DELETE /v1/auth/session",
      "GET /v1/whoami",
      "POST /v1/keys",
      "GET /v1/keys",
      "GET /v1/keys/{key_id}",
      "DELETE /v1/keys/{key_id}",
      "GET /v1/wallet/funding",
      "POST /v1/wallet/allowance",
      "POST /v1/wallet/allowance/revoke",
      "POST /v1/agents",
      "GET /v1/agents",
      "GET /v1/agents/{agent_id}",
      "PATCH /v1/agents/{agent_id}",
      "POST /v1/agents/{agent_id}/pause",
      "POST /v1/agents/{agent_id}/resume",
      "POST /v1/agents/{agent_id}/retire",
      "POST /v1/agents/{agent_id}/execute",
      "POST /v1/agents/{agent_id}/subscription",
      "GET /v1/executions",
      "GET /v1/executions/{execution_id}",
      "POST /v1/webhooks",
      "GET /v1/webhooks",
      "DELETE /v1/webhooks/{webhook_id}",
      "POST /v1/webhooks/{webhook_id}/test",
      "GET /v1/webhooks/{webhook_id}/deliveries",
      "GET /v1/executions/{execution_id}/callback",
    ]) {
      assert.ok(routes.includes(route), `${route} in ${routes.join(", ")}`);
    }
    const createKey = doc.paths["/v1/keys"]!.post!;
    assert.ok(createKey.requestBody, "request body documented");
    assert.ok(createKey.responses["201"] && createKey.responses["401"] && createKey.responses["500"]);
  });

  it("serves a readable reference with every endpoint and every error code", async () => {
    const response = await relayer.app.inject({ method: "GET", url: "/v1/reference" });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers["content-type"]), /text\/html/);
    assert.ok(response.body.includes("POST</span> <code>/v1/agents</code>"));
    for (const code of Object.keys(ERROR_CODES)) assert.ok(response.body.includes(`<code>${code}</code>`), code);
  });

  it("keeps every error code's status in the documented classes", () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      assert.ok([400, 401, 402, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503, 504].includes(spec.status), code);
    }
  });
});
