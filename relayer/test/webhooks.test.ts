// Webhooks: the /v1/webhooks routes (who may call them, what they cost, what abuse gains), and
// deliveries to a real HTTP receiver that verifies each with the standardwebhooks package. The
// events come from the statements that make executions final (completeExecutions, the store's
// fail), run on rows written here: the chain plays no part in either.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";
import { Webhook } from "standardwebhooks";

import { dropDatabase } from "../src/db/pool.js";
import { recordDisputeOutcome } from "../src/disputes/dispute-outcomes.js";
import { completeExecutions } from "../src/executions/confirmations.js";
import { ExecutionStore } from "../src/executions/execution-store.js";
import type { ExecutionRow } from "../src/executions/execution-row.js";
import { WEBHOOK_WORKER_DEFAULTS, WebhookWorker, type WebhookWorkerOptions } from "../src/webhooks/webhook-worker.js";
import { bearer, databaseUrl, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** An HTTP receiver on loopback that records what it is sent, and can be stopped and started. */
class Receiver {
  readonly received: Received[] = [];
  private server: http.Server | undefined;
  port = 0;
  /** How long it waits before answering, and with what. */
  delay_ms = 0;
  status = 204;
  headers: Record<string, string> = {};

  async start(port = 0): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        this.received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        setTimeout(() => response.writeHead(this.status, this.headers).end(), this.delay_ms);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** The events received that verify under `secret`, as its receiver would check them. */
  verified(secret: string): { type: string; data: { id?: string } & Record<string, unknown>; id: string; body: string }[] {
    const hook = new Webhook(secret);
    return this.received.flatMap((r) => {
      try {
        return [{ ...(hook.verify(r.body, r.headers) as { type: string; data: { id?: string } }), id: r.headers["webhook-id"]!, body: r.body }];
      } catch {
        return [];
      }
    });
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeout_ms = 20_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const FAST: WebhookWorkerOptions = { ...WEBHOOK_WORKER_DEFAULTS, policy: "development", poll_ms: 50 };

describe("webhooks", function () {
  this.timeout(60_000);
  let relayer: TestRelayer;
  let receiver: Receiver;
  const workers: WebhookWorker[] = [];

  before(async () => {
    relayer = await startTestRelayer();
    receiver = new Receiver();
    await receiver.start();
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.close()));
  });
  after(async () => {
    await receiver.stop();
    await relayer.close();
  });

  const startWorker = (options: Partial<WebhookWorkerOptions> = {}, db = relayer.services.db) => {
    const worker = new WebhookWorker(db, { ...FAST, ...options });
    workers.push(worker);
    worker.start();
    return worker;
  };

  /** A signed-in wallet with an API key, for executions rows of its own. */
  async function wallet(app = relayer.app) {
    const keypair = Keypair.generate();
    const token = await signIn(app, keypair);
    const key = await app.inject({ method: "POST", url: "/v1/keys", headers: bearer(token), payload: { name: "k", environment: "test" } });
    const { id, secret } = key.json() as { id: string; secret: string };
    return { address: keypair.publicKey.toBase58(), token, key_id: id, key_secret: secret };
  }

  async function createEndpoint(token: string, url: string, events: string[] = ["execution.succeeded", "execution.refunded", "execution.failed"]) {
    const response = await relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url, events } });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { id: string; secret: string; url: string; events: string[] };
  }

  /** An execution row in `state`, as the execute path leaves it there. */
  async function execution(owner: { address: string; key_id: string }, state: "settling" | "refunding" | "opening", db = relayer.services.db) {
    const id = `exec_${utils.bytes.bs58.encode(randomBytes(16))}`;
    const { rows } = await db.query<ExecutionRow>(
      `INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, task, parameters, request_hash,
         payer_token_account, quoted_usdc, amount_usdc, output, result_hash, result_digest, creator_signature, signing_key,
         finished_at, refund_reason, failure_code, failure_message)
       VALUES ($1, $2, $3, 'devnet', $4, 'sync', $5, 'task', '{}', $6, $4, 0, 0, '{"answer":42}', $6, $6, $6, $4,
         clock_timestamp(), $7, $8, $9) RETURNING *`,
      [
        id,
        owner.key_id,
        owner.address,
        Keypair.generate().publicKey.toBase58(),
        state,
        randomBytes(32),
        state === "refunding" ? "CreatorError" : null,
        state === "refunding" ? "creator_error" : null,
        state === "refunding" ? "the creator answered 500" : null,
      ],
    );
    return rows[0]!;
  }

  describe("the routes", () => {
    it("creates an endpoint whose secret is shown once, lists it without, and deletes it", async () => {
      const owner = await wallet();
      const created = await createEndpoint(owner.token, receiver.url);
      assert.match(created.id, /^whep_[1-9A-HJ-NP-Za-km-z]+$/);
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      const list = await relayer.app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(owner.token) });
      assert.equal(list.statusCode, 200);
      const listed = list.json() as { object: string; data: Record<string, unknown>[]; has_more: boolean };
      assert.deepEqual(listed.data.map((e) => e.id), [created.id]);
      assert.equal("secret" in listed.data[0]!, false);
      assert.ok(!list.body.includes(created.secret));
      const deleted = await relayer.app.inject({ method: "DELETE", url: `/v1/webhooks/${created.id}`, headers: bearer(owner.token) });
      assert.equal(deleted.statusCode, 200);
      assert.equal((deleted.json() as { id: string }).id, created.id);
      const again = await relayer.app.inject({ method: "DELETE", url: `/v1/webhooks/${created.id}`, headers: bearer(owner.token) });
      assert.equal(errorOf(again).code, "resource_not_found");
    });

    it("takes a wallet session only: none is 401 session_required, an API key 403 api_key_not_allowed", async () => {
      const owner = await wallet();
      for (const [method, url] of [
        ["POST", "/v1/webhooks"],
        ["GET", "/v1/webhooks"],
        ["DELETE", "/v1/webhooks/whep_x"],
        ["POST", "/v1/webhooks/whep_x/test"],
        ["GET", "/v1/webhooks/whep_x/deliveries"],
      ] as const) {
        const payload = method === "POST" ? { url: receiver.url, events: ["execution.failed"] } : undefined;
        const anonymous = await relayer.app.inject({ method, url, ...(payload ? { payload } : {}) });
        assert.equal(anonymous.statusCode, 401, `${method} ${url}`);
        assert.equal(errorOf(anonymous).code, "session_required");
        const withKey = await relayer.app.inject({ method, url, headers: bearer(owner.key_secret), ...(payload ? { payload } : {}) });
        assert.equal(withKey.statusCode, 403, `${method} ${url}`);
        assert.equal(errorOf(withKey).code, "api_key_not_allowed");
      }
    });

    it("answers another wallet's endpoint as absent: 404 resource_not_found, and changes nothing", async () => {
      const owner = await wallet();
      const other = await wallet();
      const created = await createEndpoint(owner.token, receiver.url);
      for (const [method, url] of [
        ["DELETE", `/v1/webhooks/${created.id}`],
        ["POST", `/v1/webhooks/${created.id}/test`],
        ["GET", `/v1/webhooks/${created.id}/deliveries`],
      ] as const) {
        const response = await relayer.app.inject({ method, url, headers: bearer(other.token) });
        assert.equal(response.statusCode, 404, `${method} ${url}`);
        assert.equal(errorOf(response).code, "resource_not_found");
        assert.equal(errorOf(response).param, "webhook_id");
      }
      const theirs = await relayer.app.inject({ method: "GET", url: "/v1/webhooks", headers: bearer(other.token) });
      assert.deepEqual((theirs.json() as { data: unknown[] }).data, []);
      const { rows } = await relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1", [created.id]);
      assert.equal(rows[0].n, 0);
    });

    it("refuses URLs outside the endpoint policy with 400 webhook_url_not_allowed, and unknown events", async () => {
      const owner = await wallet();
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
        const response = await relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(owner.token), payload: { url, events: ["execution.failed"] } });
        assert.equal(response.statusCode, 400, url);
        const code = url.length > 2048 ? "validation_failed" : "webhook_url_not_allowed";
        assert.equal(errorOf(response).code, code, url);
        assert.equal(errorOf(response).param, "url", url);
      }
      for (const [events, param] of [
        [["execution.exploded"], "events[0]"],
        [[], "events"],
      ] as const) {
        const response = await relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(owner.token), payload: { url: receiver.url, events } });
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
      const owner = await wallet();
      const responses = await Promise.all(
        Array.from({ length: 14 }, () =>
          relayer.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(owner.token), payload: { url: receiver.url, events: ["execution.failed"] } }),
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
      await relayer.app.inject({ method: "DELETE", url: `/v1/webhooks/${first.id}`, headers: bearer(owner.token) });
      await createEndpoint(owner.token, receiver.url);
    });

    it("bounds test sends to 20 an hour per endpoint (429 rate_limited), so a thousand calls send 20 requests", async () => {
      const owner = await wallet();
      const created = await createEndpoint(owner.token, receiver.url);
      const statuses: number[] = [];
      let refused: ReturnType<typeof errorOf> | undefined;
      let retry_after: unknown;
      for (let i = 0; i < 25; i += 1) {
        const response = await relayer.app.inject({ method: "POST", url: `/v1/webhooks/${created.id}/test`, headers: bearer(owner.token) });
        statuses.push(response.statusCode);
        if (response.statusCode === 429) {
          refused = errorOf(response);
          retry_after = response.headers["retry-after"];
        }
      }
      assert.deepEqual(statuses, [...Array(20).fill(202), ...Array(5).fill(429)]);
      assert.equal(refused?.code, "rate_limited");
      assert.equal(retry_after, "60");
      const { rows } = await relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1", [created.id]);
      assert.equal(rows[0].n, 20);
    });
    it("counts creations, deletions and test sends per wallet and per address (RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE): churn resets nothing", async () => {
      const limited = await startTestRelayer({ RATE_LIMIT_WEBHOOK_WRITES_PER_MINUTE: "3" });
      try {
        const token = await signIn(limited.app);
        const create = () => limited.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: receiver.url, events: ["execution.failed"] } });
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
      const owner = await wallet();
      const agent = Keypair.generate().publicKey.toBase58();
      const execute = (headers: Record<string, string>, callback_url: string) =>
        relayer.app.inject({
          method: "POST",
          url: `/v1/agents/${agent}/execute`,
          headers: { ...bearer(owner.key_secret), ...headers },
          payload: { task: "t", parameters: {}, callback_url },
        });
      const sync = await execute({}, receiver.url);
      assert.equal(sync.statusCode, 400);
      assert.deepEqual([errorOf(sync).code, errorOf(sync).param], ["validation_failed", "callback_url"]);
      for (const url of ["ftp://example.com/x", "http://10.1.2.3/x", "https://u:p@example.com/x"]) {
        const refused = await execute({ prefer: "respond-async" }, url);
        assert.equal(refused.statusCode, 400, url);
        assert.deepEqual([errorOf(refused).code, errorOf(refused).param], ["webhook_url_not_allowed", "callback_url"], url);
      }
      const { rows } = await relayer.services.db.query("SELECT count(*)::int AS n FROM executions WHERE wallet = $1", [owner.address]);
      assert.equal(rows[0].n, 0);
    });

    it("gets the execution's final event once, signed with its own secret, beside the wallet's endpoints", async () => {
      const owner = await wallet();
      const endpoint = await createEndpoint(owner.token, receiver.url, ["execution.refunded"]);
      const row = await execution(owner, "refunding");
      const secret = "whsec_" + randomBytes(32).toString("base64");
      await relayer.services.db.query("INSERT INTO execution_callbacks (execution_id, url, secret) VALUES ($1, $2, $3)", [row.id, receiver.url, secret]);
      startWorker();
      const completion = { id: row.id, from: "refunding", final: "refunded", finished_at: null } as const;
      await completeExecutions(relayer.services.db, [completion]);
      await completeExecutions(relayer.services.db, [completion]);
      await until("the callback and the endpoint's event", () => receiver.verified(secret).length === 1 && receiver.verified(endpoint.secret).length === 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const callback = receiver.verified(secret);
      assert.deepEqual(callback.map((e) => [e.type, e.data.id]), [["execution.refunded", row.id]]);
      assert.notEqual(callback[0]!.id, receiver.verified(endpoint.secret)[0]!.id);
    });
  });

  describe("deliveries", () => {
    it("sends each event of an execution once, signed, with the execution as GET /v1/executions/:id returns it", async () => {
      const owner = await wallet();
      const endpoint = await createEndpoint(owner.token, receiver.url);
      const onlyFailed = await createEndpoint(owner.token, receiver.url, ["execution.failed"]);
      const settled = await execution(owner, "settling");
      const refunded = await execution(owner, "refunding");
      const failed = await execution(owner, "opening");
      const completions = [
        { id: settled.id, from: "settling", final: "settled", finished_at: null },
        { id: refunded.id, from: "refunding", final: "refunded", finished_at: null },
      ] as const;
      await completeExecutions(relayer.services.db, [...completions]);
      // Another relayer finishing the same executions, and a second failure: no event twice.
      await completeExecutions(relayer.services.db, [...completions]);
      const store = new ExecutionStore(relayer.services.db);
      await store.fail(failed, "escrow_rejected", "open_escrow failed on chain");
      await store.fail(failed, "escrow_rejected", "open_escrow failed on chain");
      startWorker();
      await until("four deliveries", () => receiver.verified(endpoint.secret).length + receiver.verified(onlyFailed.secret).length >= 4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const only = receiver.verified(onlyFailed.secret);
      assert.deepEqual(only.map((e) => [e.type, e.data.id]), [["execution.failed", failed.id]]);
      const ours = receiver.verified(endpoint.secret);
      assert.equal(ours.length, 3, "each event once to the endpoint of every event");
      const received = receiver.received.filter((r) => ours.some((e) => e.id === r.headers["webhook-id"]));
      for (const r of received) {
        assert.equal(r.headers["content-type"], "application/json");
        assert.match(r.headers["webhook-id"]!, /^msg_[0-9a-f]{32}$/);
        assert.match(r.headers["webhook-signature"]!, /^v1,[A-Za-z0-9+/]+=*$/);
      }
      const seen = new Map(ours.map((e) => [e.type, e]));
      assert.deepEqual([...seen.keys()].sort(), ["execution.failed", "execution.refunded", "execution.succeeded"]);
      for (const [type, id] of [
        ["execution.succeeded", settled.id],
        ["execution.refunded", refunded.id],
        ["execution.failed", failed.id],
      ] as const) {
        const api = await relayer.app.inject({ method: "GET", url: `/v1/executions/${id}`, headers: bearer(owner.token) });
        assert.deepEqual(seen.get(type)!.data, api.json(), type);
      }
      const deliveries = await relayer.app.inject({ method: "GET", url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(owner.token) });
      const listed = (deliveries.json() as { data: { status: string; attempt_count: number; attempts: { status_code: number }[] }[] }).data;
      assert.equal(listed.length, 3);
      for (const delivery of listed) {
        assert.equal(delivery.status, "succeeded");
        assert.equal(delivery.attempt_count, 1);
        assert.deepEqual(delivery.attempts.map((a) => a.status_code), [204]);
      }
    });

    it("sends dispute.opened and dispute.resolved once each, when the relayer records them", async () => {
      const owner = await wallet();
      const endpoint = await createEndpoint(owner.token, receiver.url, ["dispute.opened", "dispute.resolved"]);
      const row = await execution(owner, "settling");
      await completeExecutions(relayer.services.db, [{ id: row.id, from: "settling", final: "settled", finished_at: null }]);
      const open = {
        state: "open" as const,
        amount_usdc: "250000",
        evidence_hash: randomBytes(32),
        opened_at: new Date("2026-11-26T00:00:00Z"),
        slashed_usdc: null,
        resolved_at: null,
        resolve_signature: null,
      };
      // Read twice while open, then twice once resolved, as GET /v1/disputes/:id records them.
      await recordDisputeOutcome(relayer.services.db, row.id, open);
      await recordDisputeOutcome(relayer.services.db, row.id, open);
      startWorker();
      await until("dispute.opened", () => receiver.verified(endpoint.secret).length === 1);
      const resolved = { ...open, state: "upheld" as const, slashed_usdc: "250000", resolved_at: new Date("2026-11-26T01:00:00Z"), resolve_signature: "sig" };
      await recordDisputeOutcome(relayer.services.db, row.id, resolved);
      await recordDisputeOutcome(relayer.services.db, row.id, resolved);
      await until("dispute.resolved", () => receiver.verified(endpoint.secret).length === 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const events = receiver.verified(endpoint.secret);
      assert.deepEqual(events.map((e) => e.type), ["dispute.opened", "dispute.resolved"]);
      assert.deepEqual(events[1]!.data, {
        object: "dispute",
        execution_id: row.id,
        network: "devnet",
        agent: row.agent,
        payer: owner.address,
        creator: null,
        state: "upheld",
        amount_usdc: "0.250000",
        slashed_usdc: "0.250000",
        evidence_hash: open.evidence_hash.toString("hex"),
        opened_at: "2026-11-26T00:00:00.000Z",
        resolved_at: "2026-11-26T01:00:00.000Z",
        resolve_transaction: "sig",
      });
    });

    it("deletes deliveries finished more than 30 days ago, with their attempts, and keeps the rest", async () => {
      const owner = await wallet();
      const endpoint = await createEndpoint(owner.token, receiver.url);
      const worker = startWorker();
      const queued = await Promise.all(
        [1, 2, 3].map(async () => (await relayer.app.inject({ method: "POST", url: `/v1/webhooks/${endpoint.id}/test`, headers: bearer(owner.token) })).json() as { id: string }),
      );
      await until("three tests sent", () => receiver.verified(endpoint.secret).length === 3);
      const ids = queued.map((q) => q.id);
      await until("three recorded", async () => {
        const { rows } = await relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY($1) AND state = 'succeeded'", [ids]);
        return rows[0].n === 3;
      });
      await relayer.services.db.query("UPDATE webhook_deliveries SET finished_at = clock_timestamp() - interval '31 days' WHERE id = ANY($1)", [ids.slice(0, 2)]);
      assert.ok((await worker.purge()) >= 2);
      const { rows } = await relayer.services.db.query<{ id: string }>("SELECT id FROM webhook_deliveries WHERE id = ANY($1)", [ids]);
      assert.deepEqual(rows.map((r) => r.id), [ids[2]]);
      const attempts = await relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY($1)", [ids.slice(0, 2)]);
      assert.equal(attempts.rows[0].n, 0);
    });

    it("sends a test event through the same path, and records it", async () => {
      const owner = await wallet();
      const endpoint = await createEndpoint(owner.token, receiver.url);
      startWorker();
      const test = await relayer.app.inject({ method: "POST", url: `/v1/webhooks/${endpoint.id}/test`, headers: bearer(owner.token) });
      assert.equal(test.statusCode, 202);
      const queued = test.json() as { id: string; status: string; event: string };
      assert.deepEqual([queued.status, queued.event], ["pending", "webhook.test"]);
      await until("the test event", () => receiver.verified(endpoint.secret).length === 1);
      const event = receiver.verified(endpoint.secret)[0]!;
      assert.equal(event.id, queued.id);
      assert.deepEqual(JSON.parse(event.body), {
        type: "webhook.test",
        timestamp: (JSON.parse(event.body) as { timestamp: string }).timestamp,
        data: { object: "webhook_test", webhook_id: endpoint.id },
      });
    });

    it("retries a receiver that was down, later", async () => {
      const owner = await wallet();
      const down = new Receiver();
      await down.start();
      const port = down.port;
      await down.stop();
      const endpoint = await createEndpoint(owner.token, `http://127.0.0.1:${port}/hooks`, ["execution.succeeded"]);
      const row = await execution(owner, "settling");
      startWorker();
      await completeExecutions(relayer.services.db, [{ id: row.id, from: "settling", final: "settled", finished_at: null }]);
      const deliveries = async () =>
        (
          (await relayer.app.inject({ method: "GET", url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(owner.token) })).json() as {
            data: { status: string; next_attempt_at: string | null; attempts: { attempt: number; status_code: number | null; error: string | null }[] }[];
          }
        ).data;
      await until("a failed first attempt", async () => (await deliveries())[0]?.attempts.length === 1);
      const first = (await deliveries())[0]!;
      assert.equal(first.status, "pending");
      assert.equal(first.attempts[0]!.status_code, null);
      assert.match(first.attempts[0]!.error!, /^connect_failed: connection failed: ECONNREFUSED$/);
      assert.ok(first.next_attempt_at);
      await down.start(port);
      try {
        await until("the retry", () => down.received.length === 1, 15_000);
        const event = down.verified(endpoint.secret)[0]!;
        assert.deepEqual([event.type, event.data.id], ["execution.succeeded", row.id]);
        await until("the delivery recorded", async () => (await deliveries())[0]!.status === "succeeded");
        const done = (await deliveries())[0]!;
        assert.deepEqual(done.attempts.map((a) => [a.attempt, a.status_code]), [[1, null], [2, 204]]);
        assert.equal(done.next_attempt_at, null);
      } finally {
        await down.stop();
      }
    });

    it("follows no redirect, and gives up after the schedule's last attempt: the delivery is failed", async () => {
      const owner = await wallet();
      const moved = new Receiver();
      moved.status = 307;
      const target = new Receiver();
      await Promise.all([moved.start(), target.start()]);
      moved.headers = { location: target.url };
      try {
        const endpoint = await createEndpoint(owner.token, moved.url);
        startWorker({ schedule_secs: [0, 0.2, 0.2] });
        const queued = (await relayer.app.inject({ method: "POST", url: `/v1/webhooks/${endpoint.id}/test`, headers: bearer(owner.token) })).json() as { id: string };
        const delivery = async () =>
          (
            (await relayer.app.inject({ method: "GET", url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(owner.token) })).json() as {
              data: { id: string; status: string; attempt_count: number; next_attempt_at: string | null; attempts: { status_code: number }[] }[];
            }
          ).data[0]!;
        await until("the delivery failed", async () => (await delivery()).status === "failed");
        const failed = await delivery();
        assert.equal(failed.id, queued.id);
        assert.deepEqual(failed.attempts.map((a) => a.status_code), [307, 307, 307]);
        assert.equal(failed.next_attempt_at, null);
        assert.equal(moved.received.length, 3);
        assert.equal(target.received.length, 0, "the redirect was not followed");
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.equal(moved.received.length, 3, "nothing after the last attempt");
      } finally {
        await Promise.all([moved.stop(), target.stop()]);
      }
    });

    it("loses nothing across a relayer restart: what was queued is sent by the next start", async () => {
      const name = `relayer_test_${randomBytes(6).toString("hex")}`;
      const first = await startTestRelayer({}, name);
      let second: TestRelayer | undefined;
      try {
        const owner = await wallet(first.app);
        const token = owner.token;
        const created = await first.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: receiver.url, events: ["execution.succeeded", "execution.refunded"] } });
        const endpoint = created.json() as { id: string; secret: string };
        const rows = await Promise.all([execution(owner, "settling", first.services.db), execution(owner, "refunding", first.services.db)]);
        await completeExecutions(first.services.db, [
          { id: rows[0]!.id, from: "settling", final: "settled", finished_at: null },
          { id: rows[1]!.id, from: "refunding", final: "refunded", finished_at: null },
        ]);
        // The first relayer stops before its worker sent anything.
        await first.app.close();
        await first.services.close();
        second = await startTestRelayer({}, name);
        assert.equal(receiver.verified(endpoint.secret).length, 0);
        startWorker({}, second.services.db);
        await until("both events after the restart", () => receiver.verified(endpoint.secret).length >= 2);
        const got = receiver.verified(endpoint.secret);
        assert.deepEqual(got.map((e) => e.data.id).sort(), rows.map((r) => r.id).sort());
      } finally {
        await Promise.all(workers.splice(0).map((worker) => worker.close()));
        await second?.app.close();
        await second?.services.close();
        await dropDatabase(databaseUrl(name));
      }
    });

    it("never lets a slow receiver delay executions or other receivers", async () => {
      const slow = new Receiver();
      slow.delay_ms = 3_000;
      await slow.start();
      try {
        const patient = await wallet();
        const hurried = await wallet();
        await createEndpoint(patient.token, slow.url, ["execution.succeeded"]);
        const fast = await createEndpoint(hurried.token, receiver.url, ["execution.succeeded"]);
        startWorker({ attempt_timeout_ms: 1_000, concurrency: 4, per_endpoint: 2 });
        // Ten executions of the slow receiver's wallet finish while its deliveries hang.
        const slowRows = await Promise.all(Array.from({ length: 10 }, () => execution(patient, "settling")));
        const started = performance.now();
        for (const row of slowRows) {
          await completeExecutions(relayer.services.db, [{ id: row.id, from: "settling", final: "settled", finished_at: null }]);
        }
        await until("the slow receiver holding its share of the worker's slots", () => slow.received.length >= 2);
        const quick = await execution(hurried, "settling");
        const completeStarted = performance.now();
        await completeExecutions(relayer.services.db, [{ id: quick.id, from: "settling", final: "settled", finished_at: null }]);
        const complete_ms = performance.now() - completeStarted;
        assert.ok(complete_ms < 200, `completing took ${complete_ms} ms`);
        assert.ok(performance.now() - started < 5_000);
        // The other wallet's event goes out once a slot frees: within one attempt's deadline.
        const fastStarted = performance.now();
        await until("the other receiver's event", () => receiver.verified(fast.secret).some((e) => e.data.id === quick.id));
        assert.ok(performance.now() - fastStarted < 1_000, "sent before the slow receiver's attempts end");
        assert.equal(slow.received.length, 2, "at most per_endpoint attempts in flight to one endpoint");
        const attempts = async () =>
          (
            await relayer.services.db.query<{ error: string }>(
              `SELECT a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
                WHERE d.execution_id = ANY($1::text[])`,
              [slowRows.map((r) => r.id)],
            )
          ).rows;
        await until("the slow attempts recorded", async () => (await attempts()).length >= 2);
        for (const attempt of await attempts()) assert.match(attempt.error, /^timeout: no complete response within 1000 ms/);
      } finally {
        await slow.stop();
      }
    });
  });
});
