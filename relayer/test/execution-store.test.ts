// The store's group-committed writes of an execution against a real PostgreSQL database: a batch
// says of each execution what its single statement would have said, spending caps included.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { createPool, dropDatabase, ensureDatabase, prepared } from "@agent-market/service";

import { migrate, type Db } from "../src/db/database.js";
import { SETTLE_BATCH } from "../src/executions/execution-statements.js";
import { ExecutionStore, type NewExecution, type SettleRecord } from "../src/executions/execution-store.js";
import { databaseUrl } from "./support.js";

/** A verified result and its recorded settle that bring none of the escrow's facts. */
function verifiedResult(output: unknown): SettleRecord {
  return {
    creator_finished_at: new Date(),
    output,
    result_hash: randomBytes(32),
    result_digest: randomBytes(32),
    units: "0",
    charged_usdc: null,
    creator_signature: randomBytes(64),
    signing_key: "signing-key",
    payout_account: "payout",
    fee_shard: 0,
    settle_tx: { signature: "settle", bytes: "AQID", last_valid_block_height: 44 },
  };
}

describe("execution store writes", () => {
  const url = databaseUrl(`relayer_writes_${randomBytes(6).toString("hex")}`);
  let db: Db;
  let store: ExecutionStore;

  before(async () => {
    await ensureDatabase(url);
    db = createPool(url, { max_connections: 10, prepare_statements: true, custom_plans: true });
    await migrate(db);
    store = new ExecutionStore(db);
  });
  after(async () => {
    await db.end();
    await dropDatabase(url);
  });

  async function newKey(spending_cap_usdc: bigint | null): Promise<string> {
    const id = `key_${randomBytes(8).toString("hex")}`;
    await db.query(
      `INSERT INTO api_keys (id, wallet, name, environment, key_hash, last4, spending_cap_usdc)
       VALUES ($1, 'wallet', 'test', 'test', $2, 'abcd', $3)`,
      [id, randomBytes(32), spending_cap_usdc?.toString() ?? null],
    );
    return id;
  }

  function execution(api_key_id: string, quoted_usdc: bigint): NewExecution {
    return {
      id: `exec_${randomBytes(8).toString("hex")}`,
      api_key_id,
      wallet: "wallet",
      network: "devnet",
      agent: "agent",
      mode: "sync",
      owner: "instance",
      task: "a task with \"quotes\", a backslash \\ and ünicode",
      parameters: { list: [1, "two", null], nested: { deep: true } },
      request_hash: randomBytes(32),
      payer_token_account: "token-account",
      used_subscription: false,
      quoted_usdc: quoted_usdc.toString(),
      escrow_tx: { signature: "sig", bytes: "AQID", last_valid_block_height: 42 },
    };
  }

  async function keyUsage(id: string): Promise<{ spent_usdc: string; execution_count: string }> {
    return (await db.query("SELECT spent_usdc, execution_count FROM api_keys WHERE id = $1", [id])).rows[0];
  }

  it("inserts concurrent executions of several keys together, each row exactly as given", async () => {
    const keys = [await newKey(null), await newKey(1_000_000n)];
    const executions = Array.from({ length: 12 }, (_, i) => execution(keys[i % 2]!, 50_000n));
    const created = await Promise.all(executions.map((e) => store.insert(e)));
    assert.ok(created.every((at) => at instanceof Date));
    for (const key of keys) assert.deepEqual(await keyUsage(key), { spent_usdc: "300000", execution_count: "6" });
    const { rows } = await db.query("SELECT * FROM executions WHERE id = $1", [executions[3]!.id]);
    const row = rows[0];
    assert.equal(row.state, "opening");
    assert.equal(row.task, executions[3]!.task);
    assert.deepEqual(row.parameters, executions[3]!.parameters);
    assert.ok(row.request_hash.equals(executions[3]!.request_hash));
    assert.equal(row.quoted_usdc, "50000");
    assert.deepEqual(row.escrow_tx, executions[3]!.escrow_tx);
  });

  it("holds each execution to its key's spending cap alone when a batch's total would pass it", async () => {
    const capped = await newKey(250_000n);
    const free = await newKey(null);
    const executions = [
      ...Array.from({ length: 4 }, () => execution(capped, 100_000n)),
      ...Array.from({ length: 3 }, () => execution(free, 100_000n)),
    ];
    const created = await Promise.all(executions.map((e) => store.insert(e)));
    assert.equal(created.slice(0, 4).filter(Boolean).length, 2, "two of 100000 fit under a cap of 250000");
    assert.equal(created.slice(4).filter(Boolean).length, 3);
    assert.deepEqual(await keyUsage(capped), { spent_usdc: "200000", execution_count: "2" });
    assert.deepEqual(await keyUsage(free), { spent_usdc: "300000", execution_count: "3" });
    const { rows } = await db.query("SELECT count(*)::int AS n FROM executions WHERE api_key_id = $1", [capped]);
    assert.equal(rows[0].n, 2, "no row for a refused execution");
  });

  it("settles concurrent executions together, and says which another instance moved first", async () => {
    const key = await newKey(null);
    const executions = Array.from({ length: 6 }, () => execution(key, 10_000n));
    await Promise.all(executions.map((e) => store.insert(e)));
    await db.query("UPDATE executions SET state = 'refunding' WHERE id = $1", [executions[2]!.id]);
    const outputs: unknown[] = [[1, 2, 3], null, "text", { answer: 42 }, 7, [{ a: "b" }]];
    const record = (i: number): SettleRecord => ({
      amount_usdc: "10000",
      escrow_nonce: String(i),
      escrow_deadline: new Date(Date.UTC(2030, 0, 1)),
      escrow_opened_at: new Date(Date.UTC(2029, 11, 31)),
      creator_started_at: new Date(Date.UTC(2029, 11, 31)),
      creator_finished_at: new Date(Date.UTC(2029, 11, 31, 0, 0, 1, 250)),
      output: outputs[i],
      result_hash: randomBytes(32),
      result_digest: randomBytes(32),
      units: String(1_000 + i),
      charged_usdc: "10000",
      creator_signature: randomBytes(64),
      signing_key: "signing-key",
      payout_account: "payout",
      fee_shard: i,
      settle_tx: { signature: `settle-${i}`, bytes: "AQID", last_valid_block_height: 43 },
    });
    const records = executions.map((_, i) => record(i));
    const moved = await Promise.all(executions.map((e, i) => store.settle(e.id, "opening", records[i]!)));
    assert.deepEqual(moved, [true, true, false, true, true, true]);
    const { rows } = await db.query("SELECT * FROM executions WHERE api_key_id = $1", [key]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    assert.equal(byId.get(executions[2]!.id).state, "refunding", "left as the other instance left it");
    for (const i of [0, 1, 3, 4, 5]) {
      const row = byId.get(executions[i]!.id);
      const expected = records[i]!;
      assert.equal(row.state, "settling");
      assert.deepEqual(row.output, expected.output);
      assert.ok(row.result_hash.equals(expected.result_hash));
      assert.ok(row.result_digest.equals(expected.result_digest));
      assert.ok(row.creator_signature.equals(expected.creator_signature));
      assert.equal(row.amount_usdc, "10000");
      assert.deepEqual([row.escrow_nonce, row.units], [String(i), String(1_000 + i)], "what the creator's v2 signature binds");
      assert.equal(row.escrow_deadline.getTime(), expected.escrow_deadline!.getTime());
      assert.equal(row.creator_finished_at.getTime(), expected.creator_finished_at!.getTime());
      assert.equal(row.fee_shard, i);
      assert.deepEqual(row.settle_tx, expected.settle_tx);
    }
  });

  it("records one settle_batch on all of its executions or on none, when another instance moved one first", async () => {
    const key = await newKey(null);
    const executions = Array.from({ length: 3 }, () => execution(key, 10_000n));
    await Promise.all(executions.map((e) => store.insert(e)));
    const batch_tx = { signature: "batch", bytes: "AQID", last_valid_block_height: 45 };
    const settles = (ids: string[]) =>
      ids.map((id) => ({ id, from_state: "opening" as const, record: { ...verifiedResult("ok"), settle_tx: batch_tx } }));
    await db.query("UPDATE executions SET state = 'refunding' WHERE id = $1", [executions[1]!.id]);
    assert.equal(await store.settleAll(settles(executions.map((e) => e.id))), false);
    const states = async () =>
      (await db.query("SELECT id, state, settle_tx FROM executions WHERE api_key_id = $1", [key])).rows;
    for (const row of await states()) {
      assert.equal(row.state, row.id === executions[1]!.id ? "refunding" : "opening", "nothing recorded");
      assert.equal(row.settle_tx, null);
    }
    assert.equal(await store.settleAll(settles([executions[0]!.id, executions[2]!.id])), true);
    for (const row of await states()) {
      if (row.id === executions[1]!.id) continue;
      assert.equal(row.state, "settling");
      assert.deepEqual(row.settle_tx, batch_tx, "one transaction shared by the batch");
    }
  });

  it("keeps the escrow's facts a row already holds when a settle brings none", async () => {
    const key = await newKey(null);
    const running = execution(key, 10_000n);
    await store.insert(running);
    await db.query(
      "UPDATE executions SET state = 'running', amount_usdc = 9000, escrow_deadline = '2031-01-01T00:00:00Z' WHERE id = $1",
      [running.id],
    );
    const moved = await store.settle(running.id, "running", verifiedResult({ ok: true }));
    assert.equal(moved, true);
    const row = (await db.query("SELECT * FROM executions WHERE id = $1", [running.id])).rows[0];
    assert.equal(row.amount_usdc, "9000");
    assert.equal(row.escrow_deadline.toISOString(), "2031-01-01T00:00:00.000Z");
  });
});

describe("execution store writes on a growing table", () => {
  const url = databaseUrl(`relayer_plans_${randomBytes(6).toString("hex")}`);
  let db: Db;

  before(async () => {
    await ensureDatabase(url);
    // One connection: the statement explained below is the one the writes prepared on it.
    db = createPool(url, { max_connections: 1, prepare_statements: true, custom_plans: true });
    await migrate(db);
  });
  after(async () => {
    await db.end();
    await dropDatabase(url);
  });

  it("plans a settle batch for the table as it is now, not as it was when the statement was prepared", async () => {
    const store = new ExecutionStore(db);
    const record = verifiedResult(null);
    // More calls than PostgreSQL makes custom plans for before it weighs keeping a generic one.
    for (let i = 0; i < 8; i++) assert.equal(await store.settle(`exec_absent_${i}`, "running", record), false);

    await db.query(
      `INSERT INTO api_keys (id, wallet, name, environment, key_hash, last4) VALUES ('key_fill', 'wallet', 'fill', 'test', $1, 'abcd')`,
      [randomBytes(32)],
    );
    await db.query(
      `INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, task, parameters, request_hash,
         payer_token_account, quoted_usdc, output)
       SELECT 'exec_fill_' || g, 'key_fill', 'wallet', 'devnet', 'agent', 'sync', 'settled', 'task', '{}', '\\x00',
              'token-account', 10000, jsonb_build_object('text', repeat('x', 500))
         FROM generate_series(1, 50000) AS g`,
    );
    const { rows } = await db.query(`EXPLAIN EXECUTE ${prepared(db, SETTLE_BATCH, []).name}('[]')`);
    const plan = rows.map((row) => row["QUERY PLAN"] as string).join("\n");
    assert.doesNotMatch(plan, /Seq Scan on executions/, plan);
    assert.match(plan, /Index Scan using executions_pkey/, plan);
  });
});
