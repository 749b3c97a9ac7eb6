// What cluster-like timing costs an execution: the same paid executions against the local
// marketplace twice in one run, first on the instant localnet (the baseline) and then with
// `--profile devnet-like` (docs/localnet.md: a transaction processed at the next 400 ms slot, 2%
// of sends lost, 80 ± 40 ms per RPC exchange), both with 400 ms slots. For 1 and 32 concurrent
// clients it prints each mode's p50 and p99 and what devnet-like adds; then, per step of an
// execution (open_escrow until the escrow is seen, the creator's call, the settle until the
// caller's answer, then until the settle is confirmed), the median wait in slots, from the
// relayer's own timestamps; and the slots the chain put between each execution's escrow and its
// settle. Every run ends with the reconciliation of the database with the chain.
//
//   npm run bench:timing [-- --seconds 15] [--clients 1,32]
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { rpc, startLocalMarketplace, REPO_ROOT, type LocalMarketplace } from "@agent-market/local";
import { dropDatabase, ensureDatabase, freePortBlock } from "@agent-market/service";
import pg from "pg";

import { postJson, raiseAllowance } from "./setup.js";

const secondsArg = process.argv.indexOf("--seconds");
const SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 15;
const clientsArg = process.argv.indexOf("--clients");
const CONCURRENCY = clientsArg > 0 ? process.argv[clientsArg + 1]!.split(",").map(Number) : [1, 32];
const SLOT_MS = 400;
const WARM_UP_SECONDS = 5;
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

const MODES: { name: string; args: string[] }[] = [
  { name: "instant", args: [] },
  { name: "devnet-like", args: ["--profile", "devnet-like", "--seed", "1"] },
];

const keptAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** POSTs `body`; resolves with the HTTP status and the execution id in the answer. */
async function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; id: string | null }> {
  const { status, json } = await postJson(keptAlive, url, headers, body);
  return { status, id: (json as { id?: string } | null)?.id ?? null };
}


interface Row {
  clients: number;
  p50_ms: number;
  p99_ms: number;
  per_sec: number;
  errors: number;
  ids: string[];
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Closed loop: each of `clients` sends its next call when the last one is answered. */
async function load(clients: number, seconds: number, call: () => Promise<{ status: number; id: string | null }>): Promise<Row> {
  const latencies: number[] = [];
  const ids: string[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const answer = await call().catch(() => ({ status: 0, id: null }));
        latencies.push(performance.now() - t0);
        if (answer.status === 200 && answer.id) ids.push(answer.id);
        else errors += 1;
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  const elapsed_s = (performance.now() - started) / 1000;
  return { clients, p50_ms: percentile(sorted, 0.5), p99_ms: percentile(sorted, 0.99), per_sec: ids.length / elapsed_s, errors, ids };
}

interface Steps {
  escrow: number[];
  creator: number[];
  answer: number[];
  confirmation: number[];
  chain: number[];
}

/** Each execution's steps in slots, from the relayer's timestamps and the slots of its transactions. */
async function steps(marketplace: LocalMarketplace, database_url: string, ids: string[]): Promise<Steps> {
  const client = new pg.Client({ connectionString: database_url });
  await client.connect();
  const { rows } = await client
    .query<{ escrow_ms: number; creator_ms: number; answer_ms: number; confirmation_ms: number | null; escrow_sig: string; settle_sig: string }>(
      `SELECT extract(epoch FROM escrow_opened_at - created_at) * 1000 AS escrow_ms,
              extract(epoch FROM creator_finished_at - creator_started_at) * 1000 AS creator_ms,
              extract(epoch FROM finished_at - creator_finished_at) * 1000 AS answer_ms,
              extract(epoch FROM confirmed_at - finished_at) * 1000 AS confirmation_ms,
              escrow_tx->>'signature' AS escrow_sig, settle_tx->>'signature' AS settle_sig
         FROM executions WHERE id = ANY($1) AND state = 'settled'`,
      [ids],
    )
    .finally(() => client.end());
  const chain: number[] = [];
  for (let i = 0; i < rows.length; i += 128) {
    const batch = rows.slice(i, i + 128);
    const { value } = await rpc<{ value: ({ slot: number } | null)[] }>(marketplace.rpc_url, "getSignatureStatuses", [
      batch.flatMap((row) => [row.escrow_sig, row.settle_sig]),
      { searchTransactionHistory: true },
    ]);
    batch.forEach((_, j) => {
      const escrow = value[2 * j];
      const settle = value[2 * j + 1];
      if (escrow && settle) chain.push(settle.slot - escrow.slot);
    });
  }
  const slots = (values: (number | null)[]) => values.filter((v): v is number => v !== null).map((ms) => Number(ms) / SLOT_MS);
  return {
    escrow: slots(rows.map((r) => r.escrow_ms)),
    creator: slots(rows.map((r) => r.creator_ms)),
    answer: slots(rows.map((r) => r.answer_ms)),
    confirmation: slots(rows.map((r) => r.confirmation_ms)),
    chain,
  };
}

function median(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? "–" : percentile(sorted, 0.5).toFixed(2);
}

async function waitUntilFinished(database_url: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const client = new pg.Client({ connectionString: database_url });
    await client.connect();
    const { rows } = await client
      .query<{ n: number }>("SELECT count(*)::int AS n FROM executions WHERE state NOT IN ('settled', 'refunded', 'failed')")
      .finally(() => client.end());
    if (rows[0]!.n === 0 || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

async function runMode(mode: { name: string; args: string[] }): Promise<{ rows: Row[]; steps: Steps; reconcile: string }> {
  const database = new URL(POSTGRES_URL);
  database.pathname = `/bench_timing_${randomBytes(4).toString("hex")}`;
  await ensureDatabase(database.href);
  const data_dir = mkdtempSync(join(tmpdir(), "bench-timing-"));
  // localnet's JSON-RPC and PubSub (its port + 1), the relayer, the four example agents and the
  // starter host in a row.
  const rpc_port = await freePortBlock(8);
  const marketplace = await startLocalMarketplace({
    data_dir,
    rpc_port,
    relayer_port: rpc_port + 2,
    agent_port: rpc_port + 3,
    slot_ms: SLOT_MS,
    localnet_args: mode.args,
    database_url: database.href,
    redis_url: REDIS_URL,
    relayer_env: { QUEUE_NAME: `bench-${randomBytes(4).toString("hex")}` },
    log: (line) => console.error(`· ${line}`),
  });
  try {
    const echo = marketplace.agents.find((agent) => agent.slug === "echo")!;
    await rpc(marketplace.rpc_url, "localnet_mintUsdc", [marketplace.wallet.publicKey.toBase58(), 100_000_000_000]);
    await raiseAllowance(marketplace.relayer_url, marketplace.rpc_url, marketplace.wallet, "100000.000000");
    const paid = () =>
      post(
        `${marketplace.relayer_url}/v1/agents/${echo.address}/execute`,
        { authorization: `Bearer ${marketplace.api_key}` },
        JSON.stringify({ task: "benchmark", parameters: { n: 1 } }),
      );
    await load(8, WARM_UP_SECONDS, paid);
    const rows: Row[] = [];
    for (const clients of CONCURRENCY) rows.push(await load(clients, SECONDS, paid));
    await waitUntilFinished(database.href);
    const measured = await steps(marketplace, database.href, rows.flatMap((row) => row.ids));
    const report = spawnSync(process.execPath, [join(REPO_ROOT, "relayer", "dist", "reconcile-main.js")], {
      env: { ...process.env, ...marketplace.relayer_env },
      encoding: "utf8",
    });
    return { rows, steps: measured, reconcile: (report.stdout + report.stderr).trim() };
  } finally {
    await marketplace.stop();
    await dropDatabase(database.href);
    rmSync(data_dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const results = [];
  for (const mode of MODES) results.push({ mode: mode.name, ...(await runMode(mode)) });
  keptAlive.destroy();
  const [instant, devnet] = results;
  console.log(`\nPOST /v1/agents/:id/execute, echo agent, ${SLOT_MS} ms slots, ${SECONDS} s per row`);
  console.log("clients   instant p50 / p99 ms   devnet-like p50 / p99 ms   added p50 / p99 ms   executions/s (instant, devnet-like)   errors");
  instant!.rows.forEach((row, i) => {
    const other = devnet!.rows[i]!;
    console.log(
      `${String(row.clients).padStart(7)}   ${row.p50_ms.toFixed(0)} / ${row.p99_ms.toFixed(0)}   ${other.p50_ms.toFixed(0)} / ${other.p99_ms.toFixed(0)}` +
        `   ${(other.p50_ms - row.p50_ms).toFixed(0)} / ${(other.p99_ms - row.p99_ms).toFixed(0)}   ${row.per_sec.toFixed(0)}, ${other.per_sec.toFixed(0)}   ${row.errors}, ${other.errors}`,
    );
  });
  console.log("\nmedian wait in slots: open_escrow until seen / creator / settle until answered / answered until confirmed / chain slots escrow → settle");
  for (const result of results) {
    const s = result.steps;
    console.log(
      `${result.mode.padStart(11)}   ${median(s.escrow)} / ${median(s.creator)} / ${median(s.answer)} / ${median(s.confirmation)} / ${median(s.chain)}   (${s.escrow.length} settled executions)`,
    );
  }
  for (const result of results) console.log(`\nreconciliation, ${result.mode}:\n${result.reconcile}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
