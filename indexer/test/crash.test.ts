// kill -9 while the indexer ingests, then restart: nothing missing, nothing counted twice. The
// indexer runs as its own process (src/main.ts), as in production.
import { strict as assert } from "node:assert";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { createPool } from "@agent-market/service";

import { SolanaRpc } from "../src/ingest/rpc.js";
import { reconcile } from "../src/reconcile.js";
import { activity, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

const HERE = dirname(fileURLToPath(import.meta.url));

function startIndexer(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", join(HERE, "..", "src", "main.ts")], {
    env: { ...process.env, ...env },
    cwd: join(HERE, ".."),
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));
}

describe("kill -9 during ingestion", function () {
  this.timeout(240_000);
  let env: IndexerEnv | undefined;
  const children: ChildProcess[] = [];

  before(async () => {
    env = await startEnv();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await stopEnv(env);
  });

  it("resumes from the last committed checkpoint with no gap and no duplicate", async () => {
    const runs = await Promise.all([0, 1, 2].map(() => activity(env!.market, { settled: 6, refunded: 2, open: 1 })));
    const executions = runs.reduce((sum, run) => sum + run.settled.length + run.refunded.length + run.open.length, 0);
    const childEnv = { ...env!.env, INDEXER_BACKFILL_BATCH_SIZE: "3", INDEXER_FINALITY_INTERVAL_MS: "100" };
    const pool = createPool(env!.databaseUrl, { max_connections: 2 });
    const schema = env!.config.schema;
    const stored = async () =>
      Number((await pool.query(`SELECT count(*) AS n FROM ${schema}.events`).catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n);
    try {
      let killedMidway = 0;
      for (let attempt = 0; attempt < 4; attempt++) {
        const before = await stored();
        const child = startIndexer(childEnv);
        children.push(child);
        // Kill as soon as this run has committed something (or after a while, whatever it did).
        await waitFor("some progress", async () => (await stored()) > before || child.exitCode !== null, 20_000).catch(() => {});
        child.kill("SIGKILL");
        await exited(child);
        if ((await stored()) > before) killedMidway += 1;
      }
      assert.ok(killedMidway > 0, "at least one run was killed after committing part of the work");

      // A last run finishes the work, finalizes it, and its figures equal the chain's.
      const last = startIndexer(childEnv);
      children.push(last);
      const rpc = new SolanaRpc(env!.market.localnet.rpcUrl);
      const result = await waitFor(
        "the indexer to match the chain",
        async () => {
          const check = await reconcile(rpc, pool, schema, env!.config.program_id);
          return check.differences.length === 0 && check.executions === executions ? check : null;
        },
        60_000,
      );
      assert.equal(result.differences.length, 0);
      const market = (await pool.query(`SELECT sum(executions) AS n, sum(settled) AS settled FROM ${schema}.buckets WHERE dimension = 'market' AND granularity = 'day'`)).rows[0];
      assert.equal(Number(market.n), executions, "each execution counted once in the rollups");
      assert.equal(Number(market.settled), 18);
      const keys = (await pool.query(`SELECT count(*) AS n, count(DISTINCT (signature, instruction_index, inner_index)) AS d FROM ${schema}.events`)).rows[0];
      assert.equal(keys.n, keys.d);
      last.kill("SIGTERM");
      await exited(last);

      // The reconciliation command, as an operator runs it.
      const reconciled = spawnSync(process.execPath, ["--import", "tsx", join(HERE, "..", "src", "reconcile-main.ts")], { env: { ...process.env, ...childEnv }, cwd: join(HERE, ".."), encoding: "utf8" });
      assert.equal(reconciled.status, 0, reconciled.stderr);
      assert.match(reconciled.stdout, new RegExp(`${executions} executions checked: 0 differences\\n$`));
    } finally {
      await pool.end();
    }
  });
});
