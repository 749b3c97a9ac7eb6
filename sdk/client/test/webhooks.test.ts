import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { ed25519PublicKey, ed25519Sign, formatAddress } from "@agent-market/program";
import { Webhook } from "standardwebhooks";

import { AgentMarket, ConflictError, verifyWebhook, WalletSession, WebhookVerificationError } from "../src/index.js";
import { apiError, startFakeApi, type FakeApi } from "./fake-api.js";

/** A delivery signed by the standardwebhooks package, the format's reference implementation. */
function delivery(secret: string, body: string, at: Date = new Date()) {
  const id = `msg_${randomBytes(16).toString("hex")}`;
  const signature = new Webhook(secret).sign(id, at, body);
  return { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature };
}

describe("verifyWebhook", () => {
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const body = JSON.stringify({ type: "execution.succeeded", timestamp: "2026-11-26T00:00:00.000Z", data: { object: "execution", id: "exec_1" } });

  it("accepts what a Standard Webhooks signer signs, from a record or a Headers object", async () => {
    const headers = delivery(secret, body);
    const event = await verifyWebhook(secret, body, headers);
    assert.deepEqual(event, JSON.parse(body));
    assert.deepEqual(await verifyWebhook(secret, body, new Headers(headers)), JSON.parse(body));
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.deepEqual(await verifyWebhook(secret, body, upper), JSON.parse(body));
  });

  it("accepts any one of several signatures (a secret's rotation)", async () => {
    const headers = delivery(secret, body);
    headers["webhook-signature"] = `v1,${randomBytes(32).toString("base64")} ${headers["webhook-signature"]}`;
    await verifyWebhook(secret, body, headers);
  });

  it("refuses a changed body, another secret, an old or future timestamp, missing headers", async () => {
    const headers = delivery(secret, body);
    const other = `whsec_${randomBytes(32).toString("base64")}`;
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      ["body", () => verifyWebhook(secret, body.replace("exec_1", "exec_2"), headers), /no signature matches/],
      ["secret", () => verifyWebhook(other, body, headers), /no signature matches/],
      ["old", () => verifyWebhook(secret, body, delivery(secret, body, new Date(Date.now() - 600_000))), /too far from now/],
      ["future", () => verifyWebhook(secret, body, delivery(secret, body, new Date(Date.now() + 600_000))), /too far from now/],
      ["missing", () => verifyWebhook(secret, body, { "webhook-id": headers["webhook-id"] }), /missing/],
      ["timestamp", () => verifyWebhook(secret, body, { ...headers, "webhook-timestamp": "1e9" }), /Unix seconds/],
      ["version", () => verifyWebhook(secret, body, { ...headers, "webhook-signature": headers["webhook-signature"].replace("v1,", "v2,") }), /no signature/],
    ];
    for (const [what, verifying, message] of cases) {
      await assert.rejects(verifying(), (error: Error) => error instanceof WebhookVerificationError && message.test(error.message), what);
    }
    // An old delivery passes with a clock of its time: the tolerance is the receiver's to set.
    const at = new Date(Date.now() - 600_000);
    await verifyWebhook(secret, body, delivery(secret, body, at), { nowSecs: Math.floor(at.getTime() / 1000) });
  });
});

describe("session.webhooks", () => {
  let api: FakeApi;
  afterEach(async () => api?.close());
  const seed = new Uint8Array(32).fill(9);
  const wallet = formatAddress(ed25519PublicKey(seed));

  it("reads an execution's callback with the API key", async () => {
    api = await startFakeApi();
    const callback = { object: "execution_callback", execution_id: "exec_1", url: "https://example.com/cb", delivery: null };
    api.routes.set("/v1/executions/exec_1/callback", () => ({ status: 200, body: callback }));
    const market = new AgentMarket({ apiKey: "svc_test_x", baseUrl: api.url });
    assert.deepEqual(await market.executions.callback("exec_1"), callback);
    assert.equal(api.requests.at(-1)!.headers.authorization, "Bearer svc_test_x");
  });

  it("creates, lists, tests, reads deliveries and deletes, with the session; never repeats a creation", async () => {
    api = await startFakeApi();
    api.routes.set("/v1/auth/nonce", () => ({ status: 201, body: { message: "sign me" } }));
    api.routes.set("/v1/auth/session", () => ({ status: 201, body: { object: "session", token: "sess_s", wallet } }));
    const endpoint = { object: "webhook_endpoint", id: "whep_1", url: "https://example.com/h", events: ["execution.failed"], description: "", created_at: "t" };
    api.routes.set("/v1/webhooks/whep_1/test", () => ({ status: 202, body: { object: "webhook_delivery", id: "msg_1", status: "pending" } }));
    api.routes.set("/v1/webhooks/whep_1/deliveries", () => ({ status: 200, body: { object: "list", data: [], has_more: false } }));
    api.routes.set("/v1/webhooks/whep_1", () => ({ status: 200, body: endpoint }));
    api.routes.set("/v1/webhooks", (request) =>
      request.method === "POST" ? { status: 201, body: { ...endpoint, secret: "whsec_x" } } : { status: 200, body: { object: "list", data: [endpoint], has_more: false } },
    );
    const session = await WalletSession.signIn(api.url, { publicKey: wallet, signMessage: (bytes) => ed25519Sign(seed, bytes) });
    const created = await session.webhooks.create({ url: endpoint.url, events: ["execution.failed"] });
    assert.equal(created.secret, "whsec_x");
    assert.deepEqual(api.requests.at(-1)!.body, { url: endpoint.url, events: ["execution.failed"] });
    assert.equal(api.requests.at(-1)!.headers.authorization, "Bearer sess_s");
    assert.deepEqual((await session.webhooks.list()).data, [endpoint]);
    assert.equal((await session.webhooks.test("whep_1")).id, "msg_1");
    assert.equal(api.requests.at(-1)!.method, "POST");
    await session.webhooks.deliveries("whep_1", { limit: 5 });
    assert.equal(api.requests.at(-1)!.url, "/v1/webhooks/whep_1/deliveries?limit=5");
    assert.equal((await session.webhooks.delete("whep_1")).id, "whep_1");
    assert.equal(api.requests.at(-1)!.method, "DELETE");

    api.routes.set("/v1/webhooks", () => apiError(409, "conflict_error", "webhook_limit_reached", { limit: 10 }, { "retry-after": "0" }));
    const before = api.requests.length;
    await assert.rejects(session.webhooks.create({ url: endpoint.url, events: ["execution.failed"] }), (error: Error) => error instanceof ConflictError && (error as ConflictError).code === "webhook_limit_reached");
    assert.equal(api.requests.length, before + 1);
  });
});
