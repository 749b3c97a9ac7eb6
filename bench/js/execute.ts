// Benchmark of POST /v1/agents/:agent_id/execute on this machine, in one process tree: localnet,
// the relayer (PostgreSQL + BullMQ on Redis) as its own process, and an instant creator (the echo
// example agent, in this process with the load generator). For 1, 8, 32 and 128 concurrent
// clients it prints executions per second and the marketplace's added latency: p50 and p99 of a
// paid execution against a signed call straight to the same creator, measured in the same run.
// In a closed loop latency and throughput are tied (latency = clients / throughput), so open-loop
// rows follow: calls offered at fixed rates with at most 32 in flight, giving the latency at a
// given throughput. Rows follow a 10 s warm-up of paid calls. Then CPU per process (and per
// execution), and the reconciliation of the database with the chain.
//
//   npm run bench:execute [-- --seconds 10] [--clients 1,8,32,128] [--rates 100,200,300] [--design batched|per-call]
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";

import { rpc, REPO_ROOT } from "@agent-market/local";
import { formatExecutionId, requestHash, signRequest, toHex, REQUEST_SIGNATURE_HEADER } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { startBenchMarketplace } from "./bench-marketplace.js";
import { cpuBetween, pidsOf, readCpu, type ProcessGroups } from "./cpu.js";

const secondsArg = process.argv.indexOf("--seconds");
const SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 10;
const ratesArg = process.argv.indexOf("--rates");
/** Offered rates (executions/s) of the open-loop rows, each with at most OPEN_LOOP_CLIENTS in flight. */
const RATES = ratesArg > 0 ? process.argv[ratesArg + 1]!.split(",").map(Number) : [100, 200, 300];
const OPEN_LOOP_CLIENTS = 32;
const clientsArg = process.argv.indexOf("--clients");
const CONCURRENCY = clientsArg > 0 ? process.argv[clientsArg + 1]!.split(",").map(Number) : [1, 8, 32, 128];
const designArg = process.argv.indexOf("--design");
/**
 * The relayer's design (docs/architecture.md): "batched", its default (escrows opened and
 * settled together per agent, into the receipt log, in v0 transactions loading the agent's fixed
 * accounts from its lookup table), "batched-legacy" (the same in legacy transactions only), or
 * "per-call" (an open_escrow and a settle with a receipt account per execution). Run them one
 * after the other on one machine to compare them.
 */
const DESIGN = designArg > 0 ? process.argv[designArg + 1]! : "batched";
const DESIGN_ENV: Record<string, Record<string, string>> = {
  batched: { BATCH_OPENS: "true", BATCH_REFUNDS: "true", LOOKUP_TABLES: "true" },
  "batched-legacy": { BATCH_OPENS: "true", BATCH_REFUNDS: "true", LOOKUP_TABLES: "false" },
  "per-call": { BATCH_OPENS: "false", BATCH_REFUNDS: "false", LOOKUP_TABLES: "false" },
};
if (!DESIGN_ENV[DESIGN]) throw new Error(`--design must be one of ${Object.keys(DESIGN_ENV).join(", ")}, got ${DESIGN}`);
/** Paid calls before the first row, not reported. */
const WARM_UP_SECONDS = 10;

// node:http on kept-alive connections: fetch (undici) costs the load generator about twice the
// CPU a call, and every cycle it spends is taken from the processes under test on this machine.
const keptAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** POSTs `body` to `url` and reads the whole answer; resolves with the HTTP status. */
function post(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent: keptAlive, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        response.on("data", () => undefined);
        response.on("end", () => resolve(response.statusCode!));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

interface Result {
  per_sec: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  statuses: Map<number, number>;
}

/** Counts the calls of one row: each one's status and its latency from `since_ms`. */
class Tally {
  private readonly latencies: number[] = [];
  private readonly statuses = new Map<number, number>();
  private errors = 0;
  private readonly started = performance.now();

  async measure(call: () => Promise<number>, since_ms: number): Promise<void> {
    try {
      const status = await call();
      this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
      if (status !== 200) this.errors += 1;
    } catch {
      this.errors += 1;
    }
    this.latencies.push(performance.now() - since_ms);
  }

  result(): Result {
    const elapsed_s = (performance.now() - this.started) / 1000;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    return { per_sec: (sorted.length - this.errors) / elapsed_s, p50_ms: at(0.5), p99_ms: at(0.99), errors: this.errors, statuses: this.statuses };
  }
}

/** Closed loop: each client sends its next call when the last one is answered. */
async function load(concurrency: number, seconds: number, call: () => Promise<number>): Promise<Result> {
  const tally = new Tally();
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await tally.measure(call, performance.now());
    }),
  );
  return tally.result();
}

/**
 * Open loop: calls start on a fixed schedule, `rate` a second, whatever the answers do; at most
 * `clients` are in flight and a call waits for a free one. Latency counts from the scheduled start,
 * so time spent waiting behind slow answers is in it (no coordinated omission).
 */
async function offered(rate: number, clients: number, seconds: number, call: () => Promise<number>): Promise<Result> {
  const tally = new Tally();
  const total = Math.round(rate * seconds);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let index = next++; index < total; index = next++) {
        const scheduled = started + (index * 1000) / rate;
        const wait = scheduled - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        await tally.measure(call, scheduled);
      }
    }),
  );
  return tally.result();
}

/**
 * The marketplace's share of a paid call's latency; none when the direct calls were the slower
 * (at 128 clients they wait in the creator's listen backlog).
 */
function added(paid_ms: number, direct_ms: number): string {
  return paid_ms >= direct_ms ? (paid_ms - direct_ms).toFixed(1) : "—";
}

/** Enough for about 200,000 executions, more than any row makes. */
const RELAYER_FLOOR_LAMPORTS = 500 * 1_000_000_000;
const RELAYER_TOP_UP_LAMPORTS = 1_000 * 1_000_000_000;

/**
 * Keeps the relayer's SOL up between rows, as its operator would: each settlement leaves 0.00235
 * SOL of rent in a receipt until the 3-day dispute window has passed, so a long run would drain
 * the development relayer's 100 SOL (about 42,000 executions) and get 503 relayer_underfunded.
 */
async function topUpRelayer(rpc_url: string): Promise<void> {
  const { relayer } = await rpc<{ relayer: string }>(rpc_url, "localnet_marketConfig", []);
  const { value } = await rpc<{ value: number }>(rpc_url, "getBalance", [relayer, { commitment: "confirmed" }]);
  if (value >= RELAYER_FLOOR_LAMPORTS) return;
  await rpc<string>(rpc_url, "requestAirdrop", [relayer, RELAYER_TOP_UP_LAMPORTS]);
}

async function main(): Promise<void> {
  const bench = await startBenchMarketplace({
    name: "execute",
    relayer_env: DESIGN_ENV[DESIGN]!,
    // BENCH_PROFILE_DIR=dir writes a CPU profile of the relayer there (open it in Chrome's DevTools).
    ...(process.env.BENCH_PROFILE_DIR ? { relayer_node_options: ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] } : {}),
  });
  const { marketplace, data_dir } = bench;
  const database = new URL(bench.database_url);
  try {
    const echo = marketplace.agents.find((agent) => agent.slug === "echo")!;
    const marketplaceKey = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(join(data_dir, "marketplace.json"), "utf8")) as number[]));
    const task = "benchmark";
    const parameters = { n: 1 };
    const direct = async () => {
      const body = JSON.stringify({
        execution_id: formatExecutionId(randomBytes(16)),
        agent: echo.address,
        network: "devnet",
        task,
        parameters,
        request_hash: toHex(requestHash(task, parameters)),
        deadline: new Date(Date.now() + 60_000).toISOString(),
      });
      const signature = signRequest(marketplaceKey.secretKey, {
        method: "POST",
        path: "/execute",
        body,
        timestamp_secs: Math.floor(Date.now() / 1000),
      });
      return post(`${echo.url}/execute`, { [REQUEST_SIGNATURE_HEADER]: signature }, body);
    };
    const paid = () =>
      post(`${marketplace.relayer_url}/v1/agents/${echo.address}/execute`, { authorization: `Bearer ${marketplace.api_key}` }, JSON.stringify({ task, parameters }));

    // PostgreSQL forks a backend per connection, and the relayer's pool opens connections as the
    // load grows: processes are listed again at every reading, a newcomer counted from zero.
    const processes: ProcessGroups = [
      ["localnet", () => [marketplace.processes.localnet.pid!]],
      ["relayer", () => [marketplace.processes.relayer.pid!]],
      // It reads every transaction of the program: its share of an execution's cost.
      ["indexer", () => [marketplace.processes.indexer.pid!]],
      ["load generator + creator", () => [process.pid]],
      ["postgres (all)", () => pidsOf("postgres")],
      ["redis-server", () => pidsOf("redis-server")],
    ];
    const cpu = () => readCpu(processes);

    console.log(`POST /v1/agents/:id/execute, ${DESIGN} design, against localnet (100 ms slots), PostgreSQL and BullMQ on Redis; ${SECONDS} s per row`);
    console.log("the echo agent answers at once; 'direct' is a marketplace-signed call straight to it, in the same run\n");
    console.log("clients   executions/s   p50 ms   p99 ms   direct p50   direct p99   added p50   added p99   errors");
    const cpuRows: string[] = [];
    const row = async (label: string, run: (call: () => Promise<number>, seconds: number) => Promise<Result>) => {
      await topUpRelayer(marketplace.rpc_url);
      const baseline = await run(direct, Math.min(SECONDS, 3));
      const before = cpu();
      const t0 = performance.now();
      const result = await run(paid, SECONDS);
      const wall_s = (performance.now() - t0) / 1000;
      const used = cpuBetween(before, cpu()).map((seconds) => seconds / wall_s);
      const statuses = [...result.statuses].filter(([s]) => s !== 200).map(([s, n]) => `${s}×${n}`).join(" ");
      console.log(
        `${label.padStart(7)}   ${result.per_sec.toFixed(0).padStart(12)}   ${result.p50_ms.toFixed(1).padStart(6)}   ${result.p99_ms.toFixed(1).padStart(6)}` +
          `   ${baseline.p50_ms.toFixed(2).padStart(10)}   ${baseline.p99_ms.toFixed(2).padStart(10)}` +
          `   ${added(result.p50_ms, baseline.p50_ms).padStart(9)}   ${added(result.p99_ms, baseline.p99_ms).padStart(9)}   ${result.errors}${statuses ? ` (${statuses})` : ""}`,
      );
      const perExecution = processes.map(([name], i) => `${name} ${(used[i]! * 100).toFixed(0)}% (${((used[i]! * 1000) / result.per_sec).toFixed(2)} ms)`);
      cpuRows.push(`${label.padStart(7)}   ${perExecution.join(", ")}`);
    };
    // A relayer runs for days; the bench reports it warm. V8 optimises the hot paths only after a
    // few thousand executions, and a cold relayer's CPU per execution would weigh on the first rows
    // (docs/api.md, "Performance", has the figures).
    await load(32, WARM_UP_SECONDS, paid);
    console.log("closed loop: each client sends its next call when the last one is answered");
    for (const concurrency of CONCURRENCY) {
      await row(String(concurrency), (call, seconds) => load(concurrency, seconds, call));
    }
    console.log(`open loop: calls offered at a fixed rate, at most ${OPEN_LOOP_CLIENTS} in flight; the first column is the rate offered`);
    for (const rate of RATES) {
      await row(`${rate}/s`, (call, seconds) => offered(rate, OPEN_LOOP_CLIENTS, seconds, call));
    }
    console.log("\nCPU per process (100% = one core of 2; in brackets, CPU time per paid execution)");
    for (const row of cpuRows) console.log(row);

    // Settlements are answered once processed and confirmed by the jobs after: wait, then compare.
    console.log("\nreconciliation (agent-market-reconcile), once every settlement is confirmed:");
    const deadline = Date.now() + 120_000;
    for (;;) {
      const report = spawnSync(process.execPath, [join(REPO_ROOT, "relayer", "dist", "reconcile-main.js")], {
        env: { ...process.env, ...marketplace.relayer_env },
        encoding: "utf8",
      });
      const unfinished = await unfinishedExecutions(database.href);
      if ((report.status === 0 && unfinished === 0) || Date.now() > deadline) {
        process.stdout.write(report.stdout + report.stderr);
        console.log(`unfinished executions: ${unfinished}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    keptAlive.destroy();
    await bench.stop();
  }
}

async function unfinishedExecutions(database_url: string): Promise<number> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: database_url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT count(*)::int AS n FROM executions WHERE state NOT IN ('settled', 'refunded', 'failed')");
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
