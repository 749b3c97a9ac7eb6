// Change notices over PostgreSQL: a large set of changes is split under the payload limit and
// arrives whole, each notice with its own id, and nothing arrives from a transaction that rolls
// back.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import pg from "pg";

import { ChangeSet, channelOf, type ChangeNotice } from "../src/ingest/change-notice.js";
import { POSTGRES_URL, waitFor } from "./support.js";

describe("change notices", () => {
  const schema = `indexer_test_${randomBytes(4).toString("hex")}`;
  const listener = new pg.Client({ connectionString: POSTGRES_URL });
  const writer = new pg.Client({ connectionString: POSTGRES_URL });
  // A connection the server ends (another file dropping its database with FORCE, say) must fail
  // this file's statements, not end the whole mocha process.
  for (const client of [listener, writer]) client.on("error", () => {});
  const received: string[] = [];
  let sent = 0;
  const nextId = () => `test:${++sent}`;

  before(async () => {
    await Promise.all([listener.connect(), writer.connect()]);
    listener.on("notification", (message) => received.push(message.payload ?? ""));
    await listener.query(`LISTEN "${channelOf(schema)}"`);
  });
  after(() => Promise.all([listener.end(), writer.end()]));

  // Long enough for a notice already sent to be read (none is expected).
  const quiet = () => new Promise((resolve) => setTimeout(resolve, 300));
  const executionsReceived = () => received.flatMap((payload) => (JSON.parse(payload) as ChangeNotice).executions ?? []).length;

  it("splits 2,000 execution changes into notices PostgreSQL accepts, and delivers every one at commit", async () => {
    received.length = 0;
    const changes = new ChangeSet();
    for (let i = 0; i < 2000; i++) changes.execution({ id: `exec_${i.toString().padStart(22, "x")}`, payer: `payer${i % 7}`.padEnd(44, "p"), agent: `agent${i % 3}`.padEnd(44, "a"), removed: i % 5 === 0, apiKeyId: i % 2 === 0 ? `key${i % 11}` : null, creator: `creator${i % 3}`.padEnd(44, "c") });
    let told: ChangeNotice[] = [];
    await writer.query("BEGIN");
    try {
      told = await changes.notify(writer, schema, nextId);
      await quiet();
      assert.equal(received.length, 0, "nothing before the commit");
      await writer.query("COMMIT");
    } catch (err) {
      await writer.query("ROLLBACK");
      throw err;
    }
    await waitFor("every change", async () => executionsReceived() === 2000, 5_000);
    assert.ok(received.length > 1);
    for (const payload of received) assert.ok(Buffer.byteLength(payload) < 8000);
    const notices = received.map((payload) => JSON.parse(payload) as ChangeNotice);
    const executions = notices.flatMap((notice) => notice.executions ?? []);
    assert.equal(executions.length, 2000);
    assert.equal(new Set(executions.map(([id]) => id)).size, 2000);
    assert.equal(executions.filter(([, , , removed]) => removed).length, 400);
    assert.deepEqual(new Set(notices.flatMap((notice) => notice.agents ?? [])), new Set([0, 1, 2].map((i) => `agent${i}`.padEnd(44, "a"))));
    // Each carries its API key and creator, and the id the writer told its own process.
    assert.ok(executions.every((item) => item.length === 6));
    assert.deepEqual(notices.map((notice) => notice.id), told.map((notice) => notice.id));
    assert.equal(new Set(notices.map((notice) => notice.id)).size, notices.length);
  });

  it("sends nothing for a transaction that rolls back, or for no change", async () => {
    received.length = 0;
    const changes = new ChangeSet();
    changes.agent("agent-rolled-back");
    await writer.query("BEGIN");
    await changes.notify(writer, schema, nextId);
    await writer.query("ROLLBACK");
    await new ChangeSet().notify(writer, schema, nextId);
    await quiet();
    assert.deepEqual(received, []);
  });
});
