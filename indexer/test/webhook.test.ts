// The Helius webhook endpoint: raw-transaction payloads in Helius's shape, the echoed
// Authorization value checked, bad bodies refused, and deliveries fed to the one ingestion path.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { utils } from "@coral-xyz/anchor";

import { authorizationMatches } from "../src/webhook/helius.js";
import type { Indexer } from "../src/indexer.js";
import { activity, quietIndexer, rawTransaction, startEnv, stopEnv, type IndexerEnv } from "./support.js";

const AUTH = "test-webhook-authorization-value";

/** A delivery as Helius sends a raw webhook: an array of transactions, each with Helius's extra fields. */
function heliusPayload(raws: unknown[]): string {
  return JSON.stringify(raws.map((raw, i) => ({ ...(raw as object), indexWithinBlock: i })));
}

describe("Helius webhook", function () {
  this.timeout(120_000);
  let env: IndexerEnv | undefined;
  let indexer: Indexer;
  let payload: string;
  let raws: unknown[];

  before(async () => {
    env = await startEnv();
    const run = await activity(env.market, { settled: 1, refunded: 0, open: 0 });
    raws = await Promise.all(run.signatures.map((s) => rawTransaction(env!.market, s)));
    payload = heliusPayload(raws);
    indexer = await quietIndexer(env);
  });
  after(async () => {
    await indexer?.close();
    await stopEnv(env);
  });

  const post = (body: string, headers: Record<string, string> = {}, method = "POST") =>
    indexer.yoga.fetch("http://indexer.test/webhooks/helius", { method, headers: { "content-type": "application/json", ...headers }, body: method === "GET" ? undefined : body });

  const events = async () => Number((await indexer.pool.query(`SELECT count(*) AS n FROM ${indexer.config.schema}.events`)).rows[0].n);

  it("refuses a delivery without the Authorization value, or with another one", async () => {
    for (const headers of <Record<string, string>[]>[{}, { authorization: "wrong" }, { authorization: `${AUTH}x` }, { authorization: AUTH.slice(1) }]) {
      const response = await post(payload, headers);
      assert.equal(response.status, 401);
      assert.equal(((await response.json()) as any).error.code, "unauthorized");
    }
    assert.equal(await events(), 0);
  });

  it("refuses what is not a raw transaction array, and other methods", async () => {
    assert.equal((await post("{nope", { authorization: AUTH })).status, 400);
    const invalid = await post(JSON.stringify([{ type: "TRANSFER", signature: "x" }]), { authorization: AUTH });
    assert.equal(invalid.status, 400);
    assert.equal(((await invalid.json()) as any).error.code, "invalid_payload");
    assert.equal((await post("", { authorization: AUTH }, "GET")).status, 405);
  });

  it("stores nothing the configured RPC does not hold: a forged delivery with the right secret adds no event", async () => {
    // Real events under signatures the chain never saw, then real signatures whose events were
    // rewritten away: only what the node answers for the signatures counts.
    const fresh = await quietIndexer(env!, { schema: "indexer_webhook_reread" });
    try {
      const deliver = (body: string) =>
        fresh.yoga.fetch("http://indexer.test/webhooks/helius", { method: "POST", headers: { "content-type": "application/json", authorization: AUTH }, body });
      const count = async () => Number((await fresh.pool.query(`SELECT count(*) AS n FROM indexer_webhook_reread.events`)).rows[0].n);
      const forged = structuredClone(raws) as { transaction: { signatures: string[] } }[];
      forged.forEach((tx) => (tx.transaction.signatures[0] = utils.bytes.bs58.encode(randomBytes(64))));
      const response = await deliver(heliusPayload(forged));
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { received: forged.length, read: 0, stored_events: 0 });
      assert.equal(await count(), 0);

      const tampered = structuredClone(raws) as { meta: { innerInstructions: unknown } }[];
      tampered.forEach((tx) => (tx.meta.innerInstructions = []));
      assert.equal((await deliver(heliusPayload(tampered))).status, 200);
      assert.ok((await count()) >= 3, "the chain's own events for those signatures");
    } finally {
      await fresh.close();
    }
  });

  it("stores a delivery's events once, however many times Helius retries it", async () => {
    const first = await post(payload, { authorization: AUTH });
    assert.equal(first.status, 200);
    const stored = await events();
    assert.ok(stored >= 3, `register, open, settle: ${stored}`);
    const again = await post(payload, { authorization: AUTH });
    assert.equal(((await again.json()) as any).stored_events, 0);
    assert.equal(await events(), stored);
  });

  it("compares the Authorization value in constant time over equal-length digests", () => {
    assert.equal(authorizationMatches(AUTH, AUTH), true);
    assert.equal(authorizationMatches(null, AUTH), false);
    assert.equal(authorizationMatches("", AUTH), false);
  });

  it("is off without a configured value", async () => {
    const off = await quietIndexer(env!, { helius_webhook_auth: undefined, schema: "indexer_webhook_off" });
    try {
      const response = await off.yoga.fetch("http://indexer.test/webhooks/helius", { method: "POST", headers: { authorization: AUTH }, body: payload });
      assert.equal(response.status, 404);
    } finally {
      await off.close();
    }
  });
});
