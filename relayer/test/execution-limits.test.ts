// The in-flight leases on a real PostgreSQL, as several relayers share them: two pools stand for
// two relayer processes.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPool, dropDatabase, ensureDatabase, migrate } from "@agent-market/service";

import { migrate as migrateRelayer, type Db } from "../src/db/database.js";
import { ApiError } from "../src/errors.js";
import { ExecutionLeases } from "../src/executions/execution-leases.js";
import { databaseUrl, twoRelayerProcesses } from "./support.js";

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    return error.code;
  }
  assert.fail("expected a refusal");
}

/** "leased", or the code of the refusal. */
function leasedOr(acquiring: Promise<void>): Promise<string> {
  return acquiring.then(
    () => "leased",
    (error: unknown) => (error as ApiError).code,
  );
}

/** The lease's time runs out, as when the process holding it stopped renewing it. */
async function lapse(db: Db, holder: string): Promise<void> {
  await db.query("UPDATE execution_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE holder = $1", [holder]);
}

/** `db` with a count of the statements it was given that contain `marker`. */
function countingStatements(db: Db, marker: string): { db: Db; statements: number } {
  const counted = { db, statements: 0 };
  counted.db = new Proxy(db, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver);
      return (...args: Parameters<Db["query"]>) => {
        if (String(args[0]).includes(marker)) counted.statements += 1;
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return counted;
}

describe("in-flight leases shared through PostgreSQL", () => {
  const processes = twoRelayerProcesses();

  const id = () => `exec_${randomBytes(8).toString("hex")}`;

  it("leases: the key's limit and the agent's hold across processes, refused all or nothing, freed on release", async () => {
    const limits = { per_key: 2, per_agent: 3 };
    const first = new ExecutionLeases(processes.db, limits);
    const second = new ExecutionLeases(processes.other, limits);
    try {
      const [a, b, c, d] = [id(), id(), id(), id()];
      await first.acquire(a, "key_1", "devnet", "agentA");
      await second.acquire(b, "key_1", "devnet", "agentA");
      assert.equal(await refusal(second.acquire(c, "key_1", "devnet", "agentA")), "key_concurrency_limit");
      await first.acquire(c, "key_2", "devnet", "agentA");
      assert.equal(await refusal(second.acquire(d, "key_3", "devnet", "agentA")), "agent_concurrency_limit");
      // The refusals took nothing: a third key still has its own room on another agent.
      const { rows } = await processes.db.query<{ scope: string; n: number }>(
        "SELECT scope, count(*)::int AS n FROM execution_leases GROUP BY scope ORDER BY scope",
      );
      assert.deepEqual(rows, [
        { scope: "agent/devnet/agentA", n: 3 },
        { scope: "key/key_1", n: 2 },
        { scope: "key/key_2", n: 1 },
      ]);
      await first.release(a);
      await second.acquire(d, "key_3", "devnet", "agentA");
      for (const holder of [b, c, d]) await first.release(holder);
    } finally {
      first.close();
      second.close();
    }
  });

  it("leases: a burst is taken in one statement per batch, not one per execution, each as if taken alone in order", async () => {
    // Counts the statements that take leases: one execution at a time, a burst queued on its key's
    // lock for the commit of every execution before it.
    const db = processes.db;
    const counted = countingStatements(db, "acquire_execution_leases");
    const leases = new ExecutionLeases(counted.db, { per_key: 3, per_agent: 5 });
    const holders = Array.from({ length: 24 }, () => id());
    try {
      // Two keys taking turns on one agent: the first five fill the agent, then each later one is
      // refused by whichever scope is full first, its key's before its agent's.
      const outcomes = await Promise.all(
        holders.map((holder, i) =>
          leasedOr(leases.acquire(holder, i % 2 === 0 ? "key_burst_1" : "key_burst_2", "devnet", "agentBurst")),
        ),
      );
      assert.deepEqual(outcomes.slice(0, 5), Array(5).fill("leased"));
      outcomes.slice(5).forEach((outcome, j) => {
        assert.equal(outcome, (5 + j) % 2 === 0 ? "key_concurrency_limit" : "agent_concurrency_limit", `execution ${5 + j}`);
      });
      assert.ok(counted.statements <= 3, `${counted.statements} statements for ${holders.length} executions`);
      const { rows } = await db.query<{ scope: string; n: number }>(
        "SELECT scope, count(*)::int AS n FROM execution_leases WHERE scope IN ('key/key_burst_1', 'key/key_burst_2', 'agent/devnet/agentBurst') GROUP BY scope ORDER BY scope",
      );
      assert.deepEqual(rows, [
        { scope: "agent/devnet/agentBurst", n: 5 },
        { scope: "key/key_burst_1", n: 3 },
        { scope: "key/key_burst_2", n: 2 },
      ]);
    } finally {
      for (const holder of holders) await leases.release(holder);
      leases.close();
    }
  });

  it("leases: two processes bursting on one key never hold more than its limit together", async () => {
    const limits = { per_key: 4, per_agent: 100 };
    const first = new ExecutionLeases(processes.db, limits);
    const second = new ExecutionLeases(processes.other, limits);
    const holders = Array.from({ length: 40 }, () => id());
    try {
      const outcomes = await Promise.all(
        holders.map((holder, i) =>
          leasedOr((i % 2 === 0 ? first : second).acquire(holder, "key_shared", "devnet", `agent${i % 3}`)),
        ),
      );
      assert.equal(outcomes.filter((o) => o === "leased").length, 4);
      assert.equal(outcomes.filter((o) => o === "key_concurrency_limit").length, 36);
    } finally {
      for (const holder of holders) await first.release(holder);
      first.close();
      second.close();
    }
  });

  /** Each scope's kept count beside a count of its leases: the two must agree. */
  async function countsAgree(db: Db): Promise<void> {
    const kept = await db.query<{ scope: string; n: number }>(
      "SELECT scope, held AS n FROM execution_lease_counts WHERE held > 0 ORDER BY scope",
    );
    const counted = await db.query<{ scope: string; n: number }>(
      "SELECT scope, count(*)::int AS n FROM execution_leases GROUP BY scope ORDER BY scope",
    );
    assert.deepEqual(kept.rows, counted.rows);
  }

  it("leases: each scope's kept count is its leases, through bursts of acquires and releases on two processes, expiry and truncation", async () => {
    const limits = { per_key: 6, per_agent: 9 };
    const first = new ExecutionLeases(processes.db, limits);
    const second = new ExecutionLeases(processes.other, limits);
    const holders = Array.from({ length: 60 }, () => id());
    try {
      // Taken and freed at once from both processes, over keys and agents that overlap: the count
      // rows are locked in one order by every statement, so none waits on another in a cycle
      // (PostgreSQL would abort one with a deadlock, and its acquire would throw).
      const outcomes = await Promise.all(
        holders.map(async (holder, i) => {
          const leases = i % 2 === 0 ? first : second;
          const outcome = await leasedOr(leases.acquire(holder, `key_count_${i % 4}`, "devnet", `agentCount${i % 3}`));
          if (outcome === "leased") await leases.release(holder);
          return outcome;
        }),
      );
      assert.ok(outcomes.every((o) => ["leased", "key_concurrency_limit", "agent_concurrency_limit"].includes(o)), outcomes.join());
      await countsAgree(processes.db);
      // Held now, then one of them lapses: a scope that the next acquire could fill drops it.
      const [a, b] = [id(), id()];
      await first.acquire(a, "key_count_lapse", "devnet", "agentCount0");
      await first.acquire(b, "key_count_lapse", "devnet", "agentCount0");
      await lapse(processes.db, a);
      await countsAgree(processes.db);
      const nearFull = new ExecutionLeases(processes.db, { per_key: 2, per_agent: 9 });
      const c = id();
      await nearFull.acquire(c, "key_count_lapse", "devnet", "agentCount0");
      nearFull.close();
      const { rows } = await processes.db.query<{ holder: string }>(
        "SELECT holder FROM execution_leases WHERE scope = 'key/key_count_lapse' ORDER BY holder",
      );
      assert.deepEqual(rows.map((r) => r.holder), [b, c].sort());
      await countsAgree(processes.db);
      // A scope the acquire cannot fill keeps its lapsed lease until then, counted.
      await lapse(processes.db, b);
      const d = id();
      await first.acquire(d, "key_count_lapse", "devnet", "agentCount0");
      assert.equal((await processes.db.query("SELECT 1 FROM execution_leases WHERE holder = $1", [b])).rowCount, 2);
      await countsAgree(processes.db);
      for (const holder of [b, c, d]) await first.release(holder);
      await countsAgree(processes.db);
      // Emptied wholesale (an operator's TRUNCATE), the counts go with the leases.
      await first.acquire(id(), "key_count_truncate", "devnet", "agentCount1");
      await processes.db.query("TRUNCATE execution_leases");
      await countsAgree(processes.db);
      assert.equal((await processes.db.query("SELECT 1 FROM execution_lease_counts")).rowCount, 0);
    } finally {
      first.close();
      second.close();
    }
  });

  it("leases: the migration that keeps the counts starts them from the leases already held", async () => {
    // A deployment upgrading with executions in flight: its leases exist before the counts do.
    const url = databaseUrl(`relayer_test_${randomBytes(6).toString("hex")}`);
    await ensureDatabase(url);
    const db = createPool(url, { max_connections: 2 });
    const before = mkdtempSync(join(tmpdir(), "relayer-migrations-"));
    try {
      const all = join(dirname(fileURLToPath(import.meta.url)), "..", "migrations");
      for (const name of readdirSync(all).filter((name) => name < "0014")) copyFileSync(join(all, name), join(before, name));
      await migrate(db, { dir: before, history_table: "schema_migrations", lock: "relayer migrations" });
      await db.query(
        `INSERT INTO execution_leases (scope, holder, expires_at)
         SELECT scope, 'exec_' || n, clock_timestamp() + interval '30 seconds'
           FROM unnest(ARRAY['key/key_upgrade', 'agent/devnet/agentUpgrade']) AS scope, generate_series(1, 3) AS n`,
      );
      const upgrade = readdirSync(all).filter((name) => name >= "0014").sort();
      assert.deepEqual(await migrateRelayer(db), upgrade);
      await countsAgree(db);
      const leases = new ExecutionLeases(db, { per_key: 4, per_agent: 10 });
      try {
        await leases.acquire(id(), "key_upgrade", "devnet", "agentUpgrade");
        assert.equal(await refusal(leases.acquire(id(), "key_upgrade", "devnet", "agentUpgrade")), "key_concurrency_limit");
      } finally {
        leases.close();
      }
    } finally {
      rmSync(before, { recursive: true, force: true });
      await db.end();
      await dropDatabase(url);
    }
  });

  it("leases: the lease function keeps its plans per connection, made again once the lease tables' statistics change", async () => {
    // Planning its statements again at every lease taken was about a third of its cost. A plan
    // kept from when the tables were tiny walks the count table whole after it grows, until
    // autovacuum analyzes it: the count rows change at every lease, so that comes soon.
    const url = databaseUrl(`relayer_test_${randomBytes(6).toString("hex")}`);
    await ensureDatabase(url);
    const db = createPool(url, { max_connections: 1, prepare_statements: true, custom_plans: true });
    const plans: string[] = [];
    db.on("connect", (client) => client.on("notice", (notice) => plans.push(notice.message ?? "")));
    const leases = new ExecutionLeases(db, { per_key: 4, per_agent: 4 });
    const countsPlan = async (): Promise<string> => {
      plans.length = 0;
      const holder = id();
      await leases.acquire(holder, "key_plans", "devnet", "agentPlans");
      await leases.release(holder);
      const counts = plans.find((plan) => plan.includes("SELECT array_agg(u.scope ORDER BY u.scope)"));
      assert.ok(counts, plans.join("\n"));
      return counts.split("\n").find((line) => line.includes(" on execution_lease_counts"))!.trim().replace(/\s+\(cost=.*$/, "");
    };
    try {
      await migrateRelayer(db);
      assert.equal((await db.query<{ plan_cache_mode: string }>("SHOW plan_cache_mode")).rows[0]!.plan_cache_mode, "force_custom_plan");
      // Only this test's ANALYZE may make the plan again, not autovacuum in the middle of it.
      await db.query("ALTER TABLE execution_lease_counts SET (autovacuum_enabled = false)");
      await db.query("LOAD 'auto_explain'");
      await db.query("SET auto_explain.log_nested_statements = on");
      await db.query("SET auto_explain.log_min_duration = 0");
      await db.query("SET client_min_messages = log");
      for (let i = 0; i < 8; i += 1) await countsPlan();
      await db.query("INSERT INTO execution_lease_counts (scope, held) SELECT 'key/grown_' || n, 0 FROM generate_series(1, 20000) AS n");
      assert.equal(await countsPlan(), "->  Seq Scan on execution_lease_counts c");
      await db.query("ANALYZE execution_lease_counts");
      assert.equal(await countsPlan(), "->  Index Scan using execution_lease_counts_pkey on execution_lease_counts c");
    } finally {
      leases.close();
      await db.end();
      await dropDatabase(url);
    }
  });

  it("leases: executions ending together free their leases in one statement per batch", async () => {
    const db = processes.db;
    const counted = countingStatements(db, "DELETE FROM execution_leases");
    const leases = new ExecutionLeases(counted.db, { per_key: 64, per_agent: 64 });
    const holders = Array.from({ length: 32 }, () => id());
    try {
      for (const holder of holders) await leases.acquire(holder, "key_release_burst", "devnet", "agentRelease");
      await Promise.all(holders.map((holder) => leases.release(holder)));
      assert.ok(counted.statements <= 2, `${counted.statements} statements for ${holders.length} releases`);
      const { rows } = await db.query("SELECT 1 FROM execution_leases WHERE holder = ANY($1)", [holders]);
      assert.equal(rows.length, 0);
      await countsAgree(db);
    } finally {
      leases.close();
    }
  });

  it("leases: a crashed process's leases lapse on their own; a live process's are renewed", async () => {
    const leases = new ExecutionLeases(processes.db, { per_key: 1, per_agent: 10 });
    try {
      const crashed = id();
      await leases.acquire(crashed, "key_crash", "devnet", "agentB");
      assert.equal(await refusal(leases.acquire(id(), "key_crash", "devnet", "agentB")), "key_concurrency_limit");
      // The process that held it died: nobody renews it, and its time runs out.
      leases.handOff(crashed);
      await lapse(processes.db, crashed);
      const next = id();
      await leases.acquire(next, "key_crash", "devnet", "agentB");
      const { rows } = await processes.db.query<{ holder: string }>("SELECT holder FROM execution_leases WHERE scope = 'key/key_crash'");
      assert.deepEqual(rows, [{ holder: next }]);
      // A job on another process adopts an async execution's leases: renewed from now.
      await processes.db.query("UPDATE execution_leases SET expires_at = clock_timestamp() + interval '1 second' WHERE holder = $1", [next]);
      const job = new ExecutionLeases(processes.other, { per_key: 1, per_agent: 10 });
      await job.adopt(next);
      job.close();
      const renewed = await processes.db.query<{ left_ms: number }>(
        "SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS left_ms FROM execution_leases WHERE holder = $1",
        [next],
      );
      assert.ok(Number(renewed.rows[0]!.left_ms) > 20_000);
      await leases.release(next);
    } finally {
      leases.close();
    }
  });
});
