// Webhook deliveries to a real HTTP receiver that verifies each with the standardwebhooks package.
// The events come from the statements that make executions final (the store's completeAll and
// fail) and that record disputes, run on rows written here: the chain plays no part (the tests of
// tests/relayer-webhooks.test.ts run real executions on localnet).
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { dropDatabase } from "@agent-market/service";

import { type Db } from "../src/db/database.js";
import { recordDisputeOutcome } from "../src/disputes/dispute-outcomes.js";
import { ExecutionStore, type Completion } from "../src/executions/execution-store.js";
import { bearer, databaseUrl, errorOf, startTestRelayer, type TestRelayer } from "./support.js";
import { Receiver, until, webhookFixture } from "./webhook-support.js";

/** Makes executions final as the confirmation tracker and the finish job do. */
function complete(db: Db, completions: Completion[]): Promise<void> {
  return new ExecutionStore(db).completeAll(completions);
}

describe("webhook deliveries", function () {
  this.timeout(60_000);
  const fx = webhookFixture();

  describe("callback_url of an async execution", () => {
    it("gets the execution's final event once, signed with its own secret, beside the wallet's endpoints", async () => {
      const owner = await fx.wallet();
      const endpoint = await fx.createEndpoint(owner.token, fx.receiver.url, ["execution.refunded"]);
      const row = await fx.execution(owner, "refunding");
      const secret = "whsec_" + randomBytes(32).toString("base64");
      await fx.relayer.services.db.query("INSERT INTO execution_callbacks (execution_id, url, secret) VALUES ($1, $2, $3)", [row.id, fx.receiver.url, secret]);
      const read = (key: string, id = row.id) => fx.relayer.app.inject({ method: "GET", url: `/v1/executions/${id}/callback`, headers: bearer(key) });
      // Named, not due yet: no delivery until the execution is final.
      const before = await read(owner.key_secret);
      assert.equal(before.statusCode, 200);
      assert.deepEqual(before.json(), { object: "execution_callback", execution_id: row.id, url: fx.receiver.url, delivery: null });
      fx.startWorker();
      const completion = { id: row.id, from: "refunding", final: "refunded", finished_at: null } as const;
      await complete(fx.relayer.services.db, [completion]);
      await complete(fx.relayer.services.db, [completion]);
      await until("the callback and the endpoint's event", () => fx.receiver.verified(secret).length === 1 && fx.receiver.verified(endpoint.secret).length === 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const callback = fx.receiver.verified(secret);
      assert.deepEqual(callback.map((e) => [e.type, e.data.id]), [["execution.refunded", row.id]]);
      assert.notEqual(callback[0]!.id, fx.receiver.verified(endpoint.secret)[0]!.id);
      // Its record, to the paying wallet's keys and session only.
      const recorded = (await read(owner.token)).json() as { delivery: { id: string; webhook_id: null; status: string; attempts: { status_code: number }[] } };
      assert.equal(recorded.delivery.id, callback[0]!.id);
      assert.equal(recorded.delivery.webhook_id, null);
      assert.equal(recorded.delivery.status, "succeeded");
      assert.deepEqual(recorded.delivery.attempts.map((a) => a.status_code), [204]);
      const other = await fx.wallet();
      const refused = await read(other.key_secret);
      assert.equal(refused.statusCode, 404);
      assert.deepEqual([errorOf(refused).code, errorOf(refused).param], ["resource_not_found", "execution_id"]);
      const without = await fx.execution(owner, "settling");
      assert.equal(errorOf(await read(owner.key_secret, without.id)).code, "resource_not_found");
    });
  });

  describe("deliveries", () => {
    it("sends each event of an execution once, signed, with the execution as GET /v1/executions/:id returns it", async () => {
      const owner = await fx.wallet();
      const endpoint = await fx.createEndpoint(owner.token, fx.receiver.url);
      const onlyFailed = await fx.createEndpoint(owner.token, fx.receiver.url, ["execution.failed"]);
      const settled = await fx.execution(owner, "settling");
      const refunded = await fx.execution(owner, "refunding");
      const failed = await fx.execution(owner, "opening");
      const completions = [
        { id: settled.id, from: "settling", final: "settled", finished_at: null },
        { id: refunded.id, from: "refunding", final: "refunded", finished_at: null },
      ] as const;
      await complete(fx.relayer.services.db, [...completions]);
      // Another relayer finishing the same executions, and a second failure: no event twice.
      await complete(fx.relayer.services.db, [...completions]);
      const store = new ExecutionStore(fx.relayer.services.db);
      await store.fail(failed, "escrow_rejected", "open_escrow failed on chain");
      await store.fail(failed, "escrow_rejected", "open_escrow failed on chain");
      fx.startWorker();
      await until("four deliveries", () => fx.receiver.verified(endpoint.secret).length + fx.receiver.verified(onlyFailed.secret).length >= 4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const only = fx.receiver.verified(onlyFailed.secret);
      assert.deepEqual(only.map((e) => [e.type, e.data.id]), [["execution.failed", failed.id]]);
      const ours = fx.receiver.verified(endpoint.secret);
      assert.equal(ours.length, 3, "each event once to the endpoint of every event");
      const received = fx.receiver.received.filter((r) => ours.some((e) => e.id === r.headers["webhook-id"]));
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
        const api = await fx.relayer.app.inject({ method: "GET", url: `/v1/executions/${id}`, headers: bearer(owner.token) });
        assert.deepEqual(seen.get(type)!.data, api.json(), type);
      }
      const deliveries = await fx.relayer.app.inject({ method: "GET", url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(owner.token) });
      const listed = (deliveries.json() as { data: { status: string; attempt_count: number; attempts: { status_code: number }[] }[] }).data;
      assert.equal(listed.length, 3);
      for (const delivery of listed) {
        assert.equal(delivery.status, "succeeded");
        assert.equal(delivery.attempt_count, 1);
        assert.deepEqual(delivery.attempts.map((a) => a.status_code), [204]);
      }
    });

    it("sends dispute.opened and dispute.resolved once each, when the relayer records them", async () => {
      const owner = await fx.wallet();
      const endpoint = await fx.createEndpoint(owner.token, fx.receiver.url, ["dispute.opened", "dispute.resolved"]);
      const row = await fx.execution(owner, "settling");
      await complete(fx.relayer.services.db, [{ id: row.id, from: "settling", final: "settled", finished_at: null }]);
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
      await recordDisputeOutcome(fx.relayer.services.db, row.id, open);
      await recordDisputeOutcome(fx.relayer.services.db, row.id, open);
      fx.startWorker();
      await until("dispute.opened", () => fx.receiver.verified(endpoint.secret).length === 1);
      const resolved = { ...open, state: "upheld" as const, slashed_usdc: "250000", resolved_at: new Date("2026-11-26T01:00:00Z"), resolve_signature: "sig" };
      await recordDisputeOutcome(fx.relayer.services.db, row.id, resolved);
      await recordDisputeOutcome(fx.relayer.services.db, row.id, resolved);
      await until("dispute.resolved", () => fx.receiver.verified(endpoint.secret).length === 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const events = fx.receiver.verified(endpoint.secret);
      assert.deepEqual(events.map((e) => e.type), ["dispute.opened", "dispute.resolved"]);
      assert.deepEqual(events[1]!.data, {
        object: "dispute",
        execution_id: row.id,
        network: "devnet",
        agent: row.agent,
        leaf_index: null,
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
      const owner = await fx.wallet();
      const endpoint = await fx.createEndpoint(owner.token, fx.receiver.url);
      const worker = fx.startWorker();
      const queued = await Promise.all(
        [1, 2, 3].map(async () => (await fx.relayer.app.inject({ method: "POST", url: `/v1/webhooks/${endpoint.id}/test`, headers: bearer(owner.token) })).json() as { id: string }),
      );
      await until("three tests sent", () => fx.receiver.verified(endpoint.secret).length === 3);
      const ids = queued.map((q) => q.id);
      await until("three recorded", async () => {
        const { rows } = await fx.relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY($1) AND state = 'succeeded'", [ids]);
        return rows[0].n === 3;
      });
      await fx.relayer.services.db.query("UPDATE webhook_deliveries SET finished_at = clock_timestamp() - interval '31 days' WHERE id = ANY($1)", [ids.slice(0, 2)]);
      assert.ok((await worker.purge()) >= 2);
      const { rows } = await fx.relayer.services.db.query<{ id: string }>("SELECT id FROM webhook_deliveries WHERE id = ANY($1)", [ids]);
      assert.deepEqual(rows.map((r) => r.id), [ids[2]]);
      const attempts = await fx.relayer.services.db.query("SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY($1)", [ids.slice(0, 2)]);
      assert.equal(attempts.rows[0].n, 0);
    });

    it("sends a test event through the same path, and records it", async () => {
      const owner = await fx.wallet();
      const endpoint = await fx.createEndpoint(owner.token, fx.receiver.url);
      fx.startWorker();
      const test = await fx.relayer.app.inject({ method: "POST", url: `/v1/webhooks/${endpoint.id}/test`, headers: bearer(owner.token) });
      assert.equal(test.statusCode, 202);
      const queued = test.json() as { id: string; status: string; event: string };
      assert.deepEqual([queued.status, queued.event], ["pending", "webhook.test"]);
      await until("the test event", () => fx.receiver.verified(endpoint.secret).length === 1);
      const event = fx.receiver.verified(endpoint.secret)[0]!;
      assert.equal(event.id, queued.id);
      assert.deepEqual(JSON.parse(event.body), {
        type: "webhook.test",
        timestamp: (JSON.parse(event.body) as { timestamp: string }).timestamp,
        data: { object: "webhook_test", webhook_id: endpoint.id },
      });
    });

    it("retries a receiver that was down, later", async () => {
      const owner = await fx.wallet();
      const down = new Receiver();
      await down.start();
      const port = down.port;
      await down.stop();
      const endpoint = await fx.createEndpoint(owner.token, `http://127.0.0.1:${port}/hooks`, ["execution.succeeded"]);
      const row = await fx.execution(owner, "settling");
      fx.startWorker();
      await complete(fx.relayer.services.db, [{ id: row.id, from: "settling", final: "settled", finished_at: null }]);
      const deliveries = async () =>
        (
          (await fx.relayer.app.inject({ method: "GET", url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(owner.token) })).json() as {
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
      const owner = await fx.wallet();
      const moved = new Receiver();
      moved.status = 307;
      const target = new Receiver();
      await Promise.all([moved.start(), target.start()]);
      moved.headers = { location: target.url };
      try {
        const endpoint = await fx.createEndpoint(owner.token, moved.url);
        fx.startWorker({ schedule_secs: [0, 0.2, 0.2] });
        const queued = (await fx.relayer.app.inject({ method: "POST", url: `/v1/webhooks/${endpoint.id}/test`, headers: bearer(owner.token) })).json() as { id: string };
        const delivery = async () =>
          (
            (await fx.relayer.app.inject({ method: "GET", url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(owner.token) })).json() as {
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
        const owner = await fx.wallet(first.app);
        const token = owner.token;
        const created = await first.app.inject({ method: "POST", url: "/v1/webhooks", headers: bearer(token), payload: { url: fx.receiver.url, events: ["execution.succeeded", "execution.refunded"] } });
        const endpoint = created.json() as { id: string; secret: string };
        const rows = await Promise.all([fx.execution(owner, "settling", first.services.db), fx.execution(owner, "refunding", first.services.db)]);
        await complete(first.services.db, [
          { id: rows[0]!.id, from: "settling", final: "settled", finished_at: null },
          { id: rows[1]!.id, from: "refunding", final: "refunded", finished_at: null },
        ]);
        // The first relayer stops before its worker sent anything.
        await first.app.close();
        await first.services.close();
        second = await startTestRelayer({}, name);
        assert.equal(fx.receiver.verified(endpoint.secret).length, 0);
        fx.startWorker({}, second.services.db);
        await until("both events after the restart", () => fx.receiver.verified(endpoint.secret).length >= 2);
        const got = fx.receiver.verified(endpoint.secret);
        assert.deepEqual(got.map((e) => e.data.id).sort(), rows.map((r) => r.id).sort());
      } finally {
        await fx.closeWorkers();
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
        const patient = await fx.wallet();
        const hurried = await fx.wallet();
        await fx.createEndpoint(patient.token, slow.url, ["execution.succeeded"]);
        const fast = await fx.createEndpoint(hurried.token, fx.receiver.url, ["execution.succeeded"]);
        fx.startWorker({ attempt_timeout_ms: 1_000, concurrency: 4, per_endpoint: 2 });
        // Ten executions of the slow receiver's wallet finish while its deliveries hang.
        const slowRows = await Promise.all(Array.from({ length: 10 }, () => fx.execution(patient, "settling")));
        const started = performance.now();
        for (const row of slowRows) {
          await complete(fx.relayer.services.db, [{ id: row.id, from: "settling", final: "settled", finished_at: null }]);
        }
        await until("the slow receiver holding its share of the worker's slots", () => slow.received.length >= 2);
        const quick = await fx.execution(hurried, "settling");
        const completeStarted = performance.now();
        await complete(fx.relayer.services.db, [{ id: quick.id, from: "settling", final: "settled", finished_at: null }]);
        const complete_ms = performance.now() - completeStarted;
        assert.ok(complete_ms < 200, `completing took ${complete_ms} ms`);
        assert.ok(performance.now() - started < 5_000);
        // The other wallet's event goes out once a slot frees: within one attempt's deadline.
        const fastStarted = performance.now();
        await until("the other receiver's event", () => fx.receiver.verified(fast.secret).some((e) => e.data.id === quick.id));
        assert.ok(performance.now() - fastStarted < 1_000, "sent before the slow receiver's attempts end");
        assert.equal(slow.received.length, 2, "at most per_endpoint attempts in flight to one endpoint");
        const attempts = async () =>
          (
            await fx.relayer.services.db.query<{ error: string }>(
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
