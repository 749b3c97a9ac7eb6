// Webhooks end to end: real executions on localnet (settled, refunded, async with a callback) reach
// a real HTTP receiver that checks every delivery with the standardwebhooks package, each event
// once per execution; a receiver that answers slowly does not slow the executions; and events
// queued while the receiver is down survive a relayer restart and arrive once it is back.
import { strict as assert } from "node:assert";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, relayerEnv, startRelayerWith, type RunningRelayer } from "./src/relayer.js";
import { Receiver, until } from "./src/webhook-receiver.js";

const FUNDS = 10_000_000n;

describe("relayer: webhooks of real executions", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer | undefined;
  let env: Record<string, string>;
  const agents: ListedAgent[] = [];
  const receiver = new Receiver();

  before(async () => {
    market = await TestMarket.start();
    env = await relayerEnv(market.localnet);
    relayer = await startRelayerWith(env, { dropDatabase: false });
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await Promise.all(agents.map((a) => a.server.close()));
    await relayer?.close();
    await market?.stop();
  });

  it("delivers each execution's event once, signed, the execution as the API returns it, and a slow receiver slows no execution", async () => {
    const live = relayer!;
    const echo = await listAgent(market, live);
    // Listed while it answers (the listing probes it), then failing every call.
    const failing = await listAgent(market, live);
    agents.push(echo, failing);
    echo.server.delay_ms = 0;
    failing.server.delay_ms = 0;
    failing.server.behaviour = "status_500";
    const payer = await newPayer(market, live, FUNDS);
    const created = await api<{ id: string; secret: string }>(live, "POST", "/v1/webhooks", {
      token: payer.token,
      body: { url: receiver.url, events: ["execution.succeeded", "execution.refunded", "execution.failed"] },
    });
    assert.equal(created.status, 201);
    receiver.secrets.push(created.body.secret);
    // Every delivery takes the receiver 3 s to answer; the executions must not wait on that.
    receiver.delay_ms = 3_000;

    const ids: Record<string, string[]> = { "execution.succeeded": [], "execution.refunded": [] };
    for (let i = 0; i < 3; i += 1) {
      const started = Date.now();
      const ok = await execute(live, payer, echo.address);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.ok(Date.now() - started < 2_500, `an execution took ${Date.now() - started} ms`);
      ids["execution.succeeded"]!.push(String(ok.body.id));
    }
    const refused = await execute(live, payer, failing.address);
    assert.equal(refused.status, 502);
    ids["execution.refunded"]!.push(String((refused.body as { error: { execution_id: string } }).error.execution_id));

    // An async execution names its own callback, signed with the secret its 202 carries.
    const async = await execute(live, payer, echo.address, { task: "later please", parameters: { language: "en" }, callback_url: receiver.url }, { prefer: "respond-async" });
    assert.equal(async.status, 202);
    const callbackSecret = String(async.body.callback_secret);
    assert.match(callbackSecret, /^whsec_/);
    receiver.secrets.push(callbackSecret);
    ids["execution.succeeded"]!.push(String(async.body.id));

    await until("every event", () => receiver.events.filter((e) => e.secret_of === created.body.secret).length >= 5 && receiver.events.some((e) => e.secret_of === callbackSecret));
    await sleep(4_000);
    const toEndpoint = receiver.events.filter((e) => e.secret_of === created.body.secret);
    assert.deepEqual(
      toEndpoint.map((e) => `${e.type} ${e.data.id}`).sort(),
      Object.entries(ids).flatMap(([type, list]) => list.map((id) => `${type} ${id}`)).sort(),
      "each event once",
    );
    const callback = receiver.events.filter((e) => e.secret_of === callbackSecret);
    assert.deepEqual(callback.map((e) => `${e.type} ${e.data.id}`), [`execution.succeeded ${async.body.id}`]);
    const recorded = await api<{ url: string; delivery: { id: string; status: string } }>(live, "GET", `/v1/executions/${async.body.id}/callback`, { token: payer.apiKey });
    assert.equal(recorded.body.url, receiver.url);
    assert.equal(recorded.body.delivery.id, callback[0]!.id);
    assert.equal(recorded.body.delivery.status, "succeeded");
    for (const event of toEndpoint) {
      const read = await api(live, "GET", `/v1/executions/${event.data.id}`, { token: payer.apiKey });
      assert.deepEqual(event.data, read.body, event.type);
    }
  });

  it("keeps what a receiver that is down did not get across a relayer restart, and sends it once it is back", async () => {
    const echo = await listAgent(market, relayer!);
    agents.push(echo);
    echo.server.delay_ms = 0;
    const payer = await newPayer(market, relayer!, FUNDS);
    const down = new Receiver();
    await down.start();
    const port = down.port;
    await down.stop();
    const created = await api<{ id: string; secret: string }>(relayer!, "POST", "/v1/webhooks", {
      token: payer.token,
      body: { url: `http://127.0.0.1:${port}/hooks`, events: ["execution.succeeded"] },
    });
    down.secrets.push(created.body.secret);
    const ran = await Promise.all([execute(relayer!, payer, echo.address), execute(relayer!, payer, echo.address)]);
    for (const response of ran) assert.equal(response.status, 200);
    // Wait for the executions to become final (their events queued) and a first attempt to fail.
    const attempted = async () => {
      const list = await api<{ data: { attempts: unknown[] }[] }>(relayer!, "GET", `/v1/webhooks/${created.body.id}/deliveries`, { token: payer.token });
      return list.body.data.length === 2 && list.body.data.every((d) => d.attempts.length >= 1);
    };
    const deadline = Date.now() + 30_000;
    while (!(await attempted())) {
      if (Date.now() > deadline) throw new Error("no failed first attempts");
      await sleep(200);
    }
    await relayer!.close();
    relayer = undefined;
    await down.start(port);
    try {
      // The database goes with this relayer, once the tests are over.
      relayer = await startRelayerWith(env);
      await until("both events after the restart", () => down.events.length >= 2);
      await sleep(1_000);
      assert.deepEqual(down.events.map((e) => e.data.id).sort(), ran.map((r) => String(r.body.id)).sort());
    } finally {
      await down.stop();
    }
  });
});
