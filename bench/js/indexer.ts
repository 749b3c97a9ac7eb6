// Benchmark of the indexer (indexer/) on this machine, each figure printed with a baseline
// measured in the same run:
//   1. ingestion lag, transaction processed → visible in GraphQL, p50/p99, while escrows are
//      opened at fixed rates and at the most the chain takes; baseline: the chain's own lag,
//      processed → readable with getTransaction at `confirmed`, for the same transactions;
//   2. backfill from localnet: events/s; baseline: the same reads without storing anything; and
//      the CPU per event of localnet, the indexer and PostgreSQL, beside how busy the cores were;
//   3. GraphQL p50/p99 of the dashboard's queries at 32 concurrent clients over executions
//      seeded directly in the database: every answer computed, then with the response cache
//      (each subject asked once first), idle and while the change feed carries the notices of
//      `--changes` executions a second; baseline: the smallest query (`{ indexer { network } }`,
//      one one-row read, never kept).
//
//   npm run indexer --workspace @agent-market/bench -- [--seconds 10] [--rates 100,max]
//     [--events 100000] [--executions 1000000] [--clients 32] [--changes 100] [--database NAME]
//
// `--database NAME` keeps the GraphQL run's seeded database under that name: a later run with the
// same name and the same `--executions` re-uses it instead of seeding again (minutes at 1,000,000).
import { randomBytes } from "node:crypto";

import { openEscrowInstruction, requestHash, formatExecutionId } from "@agent-market/program";
import { dropDatabase, ensureDatabase, silentLogger } from "@agent-market/service";
import { Transaction } from "@solana/web3.js";

import { TestMarket, type AgentFixture, type Wallet } from "@agent-market/tests/fixtures";

import { backfill, createIndexer, parseConfig, SolanaRpc, type Indexer } from "@agent-market/indexer";
import { CORES, cpuBetween, machineBusySeconds, pidsOf, readCpu, type ProcessGroups } from "./cpu.js";
import { SEEDED_AGENTS, seedExecutions, seededSubjects, type SeededSubjects } from "./seed-executions.js";

const arg = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
};
const SECONDS = Number(arg("seconds", "10"));
const RATES = arg("rates", "100,max").split(",");
const EVENTS = Number(arg("events", "100000"));
/** An escrow and its token vault, about what one open_escrow leaves in rent (a generous bound). */
const ESCROW_ACCOUNTS_BYTES = 1_000;
const EXECUTIONS = Number(arg("executions", "1000000"));
const CLIENTS = Number(arg("clients", "32"));
const CHANGES = Number(arg("changes", "100"));
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const KEPT_DATABASE = arg("database", "");

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}
const ms = (value: number) => `${value.toFixed(1)} ms`;
const sleep = (duration: number) => new Promise((resolve) => setTimeout(resolve, duration));

function databaseUrl(name = `indexer_bench_${randomBytes(4).toString("hex")}`): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function indexerOver(market: TestMarket, url: string, options: { live: boolean; onIngested?: (signature: string) => void }): Promise<Indexer> {
  await ensureDatabase(url);
  const config = parseConfig({
    INDEXER_NETWORK: "localnet",
    DEVNET_PROGRAM_ID: market.programId.toBase58(),
    INDEXER_DATABASE_URL: url,
    INDEXER_RPC_URL: market.localnet.rpcUrl,
    INDEXER_WEBSOCKET_URL: market.localnet.websocketUrl,
    INDEXER_LIVE: String(options.live),
    INDEXER_GAP_CHECK_INTERVAL_MS: "3600000",
  });
  return createIndexer(config, { logger: silentLogger, ingest: options.live, onIngested: options.onIngested });
}

/** Signs an open_escrow for a new execution; answers the transaction and the execution id. */
async function openEscrowTransaction(market: TestMarket, agent: AgentFixture, payer: Wallet, blockhash: string) {
  const executionId = randomBytes(16);
  const instruction = openEscrowInstruction({
    programId: market.programId,
    relayer: market.relayer.publicKey,
    usdcMint: market.usdcMint,
    agent: agent.address,
    payer: payer.wallet.publicKey,
    payerTokenAccount: payer.tokenAccount,
    executionId,
    apiKeyId: randomBytes(16),
    requestHash: requestHash("summarize", { text: "bench" }),
    // The bench measures ingestion, not the price guard: any price the agent asks is accepted.
    maxAmountUsdc: 0xffff_ffff_ffff_ffffn,
  });
  const tx = new Transaction({ feePayer: market.relayer.publicKey, recentBlockhash: blockhash }).add(instruction);
  tx.sign(market.relayer);
  return { raw: tx.serialize(), id: formatExecutionId(executionId) };
}

async function sendRaw(market: TestMarket, raw: Buffer): Promise<string> {
  return market.localnet.call<string>("sendTransaction", [raw.toString("base64"), { encoding: "base64", skipPreflight: true }]);
}

/** Transactions signed ahead for each second of the `max` row: more than localnet takes. */
const MAX_SIGNED_PER_SECOND = 1_000;

async function lagRows(): Promise<void> {
  const market = await TestMarket.start({ slotMs: 400 });
  const url = databaseUrl();
  const processedAt = new Map<string, number>();
  const lags: number[] = [];
  let indexer: Indexer | undefined;
  try {
    const agent = await market.agent();
    const payer = await market.payer(1_000_000_000_000n);
    const pending = new Map<string, string>(); // signature → execution id
    indexer = await indexerOver(market, url, {
      live: true,
      onIngested: (signature) => {
        const id = pending.get(signature);
        const sentAt = processedAt.get(signature);
        if (!id || sentAt === undefined) return;
        // Visible in GraphQL: the execution answers through the server.
        void Promise.resolve(
          indexer!.yoga.fetch("http://bench/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: `{ execution(id: "${id}") { id } }` }) }),
        )
          .then((response: Response) => response.json() as Promise<{ data?: { execution: unknown } }>)
          .then((body) => {
            if (body.data?.execution) lags.push(performance.now() - sentAt);
          });
      },
    });
    await sleep(1000);
    console.log("\n## Ingestion lag (processed → visible in GraphQL), 400 ms slots");
    console.log("| offered rate | sent/s | indexer p50 | indexer p99 | chain p50 | chain p99 | p99 ratio |");
    console.log("|---|---|---|---|---|---|---|");
    for (const rate of RATES) {
      lags.length = 0;
      const chainLags: number[] = [];
      const unlimited = rate === "max";
      const interval = unlimited ? 0 : 1000 / Number(rate);
      // Signed before the clock starts: building and signing shares this process's one thread
      // with the indexer, and at 300/s took enough of it to hold the writer back (the row
      // measured the generator). A row's transactions share a blockhash, valid far longer than a
      // row lasts.
      const blockhash = (await market.connection.getLatestBlockhash()).blockhash;
      const signed = await Promise.all(
        Array.from({ length: (unlimited ? MAX_SIGNED_PER_SECOND : Number(rate)) * SECONDS }, () => openEscrowTransaction(market, agent, payer, blockhash)),
      );
      const started = performance.now();
      let sent = 0;
      const inFlight = new Set<Promise<void>>();
      while (performance.now() - started < SECONDS * 1000 && sent < signed.length) {
        const { raw, id } = signed[sent]!;
        const sample = sent % 10 === 0;
        const work = sendRaw(market, raw).then(async (signature) => {
          const at = performance.now();
          processedAt.set(signature, at);
          pending.set(signature, id);
          // The chain's own lag, sampled: when getTransaction at `confirmed` first answers.
          if (sample) {
            for (let i = 0; i < 200; i++) {
              const tx = await market.localnet.call("getTransaction", [signature, { encoding: "json", commitment: "confirmed" }]);
              if (tx) {
                chainLags.push(performance.now() - at);
                break;
              }
              await sleep(10);
            }
          }
        });
        sent += 1;
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
        if (unlimited) {
          if (inFlight.size >= 32) await Promise.race(inFlight);
        } else {
          const next = started + sent * interval;
          const wait = next - performance.now();
          if (wait > 0) await sleep(wait);
        }
      }
      await Promise.allSettled([...inFlight]);
      const elapsed = (performance.now() - started) / 1000;
      await sleep(3000);
      const p99 = quantile(lags, 0.99);
      const chainP99 = quantile(chainLags, 0.99);
      console.log(
        `| ${rate}/s | ${(sent / elapsed).toFixed(0)} | ${ms(quantile(lags, 0.5))} | ${ms(p99)} | ${ms(quantile(chainLags, 0.5))} | ${ms(chainP99)} | ${(p99 / chainP99).toFixed(2)} |`,
      );
      console.log(`  (${lags.length} of ${sent} executions seen in GraphQL)`);
    }
  } finally {
    await indexer?.close();
    await market.stop();
    await dropDatabase(url).catch(() => {});
  }
}

async function backfillRow(): Promise<void> {
  const market = await TestMarket.start({ slotMs: 50 });
  const url = databaseUrl();
  let indexer: Indexer | undefined;
  try {
    const agent = await market.agent();
    const payer = await market.payer(1_000_000_000_000n);
    console.log(`\n## Backfill (${EVENTS} events from localnet)`);
    // Each escrow's rent comes from the relayer's SOL, which localnet funds for a test run, not
    // for a hundred thousand escrows left open: the faucet tops it up first.
    const latest = await market.connection.getLatestBlockhash();
    const rentLamports = await market.connection.getMinimumBalanceForRentExemption(ESCROW_ACCOUNTS_BYTES);
    const topUp = await market.connection.requestAirdrop(market.relayer.publicKey, Math.ceil(EVENTS * rentLamports * 1.5));
    await market.connection.confirmTransaction({ signature: topUp, ...latest });
    const sendStarted = performance.now();
    let blockhash = (await market.connection.getLatestBlockhash()).blockhash;
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < EVENTS; i++) {
      if (i % 20 === 0) blockhash = (await market.connection.getLatestBlockhash()).blockhash;
      const { raw } = await openEscrowTransaction(market, agent, payer, blockhash);
      const work = sendRaw(market, raw);
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
      if (inFlight.size >= 64) await Promise.race(inFlight);
    }
    await Promise.allSettled([...inFlight]);
    console.log(`  (sent in ${((performance.now() - sendStarted) / 1000).toFixed(1)} s)`);
    await sleep(2000);
    indexer = await indexerOver(market, url, { live: false });

    // CPU of each process while it reads and while it backfills: on a machine of few cores the
    // node, the indexer and PostgreSQL share them, and their sum per event bounds the rate.
    const groups: ProcessGroups = [
      ["localnet", () => [market.localnet.child.pid!]],
      ["indexer (this process)", () => [process.pid]],
      ["postgres (all)", () => pidsOf("postgres")],
    ];
    const measured = async <T>(work: () => Promise<T>) => {
      const cpu = readCpu(groups);
      const busy = machineBusySeconds();
      const started = performance.now();
      const result = await work();
      const secs = (performance.now() - started) / 1000;
      return { result, secs, cpu: cpuBetween(cpu, readCpu(groups)), busy: (machineBusySeconds() - busy) / (secs * CORES) };
    };

    // Baseline: the same reads, nothing stored.
    const rpc = new SolanaRpc(market.localnet.rpcUrl);
    const read = await measured(async () => {
      let before: string | undefined;
      const signatures: string[] = [];
      for (;;) {
        const page = await rpc.getSignaturesForAddress(indexer!.config.program_id.toBase58(), { before, limit: 1000 });
        signatures.push(...page.map((info) => info.signature));
        if (page.length < 1000) break;
        before = page[page.length - 1]!.signature;
      }
      for (let from = 0; from < signatures.length; from += 500) await rpc.getTransactions(signatures.slice(from, from + 500));
      return signatures.length;
    });
    const stored = await measured(() => backfill(indexer!.rpc, indexer!.store));
    const events = stored.result.events;
    console.log("| events | backfill events/s | read-only events/s | ratio |");
    console.log("|---|---|---|---|");
    console.log(`| ${events} | ${(events / stored.secs).toFixed(0)} | ${(read.result / read.secs).toFixed(0)} | ${(events / stored.secs / (read.result / read.secs)).toFixed(2)} |`);
    console.log(`\nCPU per event (ms), and the machine's ${CORES} cores busy:`);
    console.log(`| run | ${groups.map(([name]) => name).join(" | ")} | all | cores busy |`);
    console.log(`|---|${groups.map(() => "---").join("|")}|---|---|`);
    for (const [name, run, count] of [["read only", read, read.result], ["backfill", stored, events]] as const) {
      const perEvent = run.cpu.map((seconds) => (seconds * 1000) / count);
      console.log(`| ${name} | ${perEvent.map((ms) => ms.toFixed(3)).join(" | ")} | ${perEvent.reduce((a, b) => a + b, 0).toFixed(3)} | ${(run.busy * 100).toFixed(0)}% |`);
    }
  } finally {
    await indexer?.close();
    await market.stop();
    await dropDatabase(url).catch(() => {});
  }
}

/** Whether a kept database already holds this many seeded executions (and their rollups). */
async function seeded(indexer: Indexer, executions: number): Promise<boolean> {
  const s = indexer.config.schema;
  const row = (await indexer.pool.query(`SELECT (SELECT count(*) FROM ${s}.executions) AS executions, (SELECT count(*) FROM ${s}.agents) AS agents`)).rows[0];
  if (Number(row.executions) === executions && Number(row.agents) === SEEDED_AGENTS) return true;
  await indexer.pool.query(`TRUNCATE ${s}.executions, ${s}.buckets, ${s}.agents`);
  return false;
}

/** How many distinct subjects a query cycles through (1 for the shared ones). */
const subjectCount = (s: SeededSubjects, name: string) =>
  name.startsWith("agent status") ? s.agents.length : name.startsWith("API key") ? s.keys.length : name.startsWith("payer") ? s.payers.length : 1;

/**
 * The notices the writer would send for `perSecond` executions a second of random seeded subjects,
 * committed 10 times a second, on the network's channel: the cache drops what they name, and the
 * answers are computed again (the rows themselves do not change).
 */
function noticesAt(indexer: Indexer, subjects: SeededSubjects, perSecond: number): () => void {
  if (perSecond <= 0) return () => {};
  const channel = `${indexer.config.schema}_changes`;
  const pick = (list: string[]) => list[Math.floor(Math.random() * list.length)]!;
  const timer = setInterval(() => {
    const executions = Array.from({ length: Math.max(1, Math.round(perSecond / 10)) }, () => [
      formatExecutionId(randomBytes(16)),
      pick(subjects.payers),
      pick(subjects.agents),
      false,
      pick(subjects.keys),
      null,
    ]);
    void indexer.pool.query(`SELECT pg_notify($1, $2)`, [channel, JSON.stringify({ executions, agents: [...new Set(executions.map((e) => e[2]))] })]);
  }, 100);
  return () => clearInterval(timer);
}

const DASHBOARD_QUERIES: [string, (subjects: SeededSubjects, i: number) => { query: string; variables: Record<string, unknown> }][] = [
  [
    "agent status, uptime, 90 days",
    (s, i) => ({
      query: `query($a: String!) { agent(address: $a) { status collateral { usdc finalized } uptime { window executions successRate latencySlots { p50 p95 } latencySeconds { p50 p95 } spent { usdc } } daily { day executions status } lastExecution { id } } }`,
      variables: { a: s.agents[i % s.agents.length] },
    }),
  ],
  [
    "API key usage, 24 hour buckets",
    (s, i) => ({
      query: `query($k: String!) { usage(dimension: API_KEY, subject: $k) { totals(window: D30) { executions spent { usdc finalized } } buckets(granularity: HOUR) { start executions spent { usdc } } lastExecution { id openedAt } } }`,
      variables: { k: s.keys[i % s.keys.length] },
    }),
  ],
  [
    "payer's executions, a page of 20",
    (s, i) => ({
      query: `query($p: String!) { executions(first: 20, filter: { payer: $p }) { edges { cursor node { id state amount { usdc finalized } fee { usdc } commitment openTransaction { signature } } } pageInfo { hasNextPage } } }`,
      variables: { p: s.payers[i % s.payers.length] },
    }),
  ],
  ["agents list with status", () => ({ query: `{ agents(first: 20) { nodes { address status stats(window: H24) { successRate executions } } } }`, variables: {} })],
  ["market money", () => ({ query: `{ market { fees { usdc finalized } feeShards { index fees { usdc } } collateral { usdc } disputes { open } } }`, variables: {} })],
];

async function graphqlRows(): Promise<void> {
  const url = databaseUrl(KEPT_DATABASE || undefined);
  await ensureDatabase(url);
  const env = { INDEXER_NETWORK: "localnet", INDEXER_DATABASE_URL: url, INDEXER_RPC_URL: "http://127.0.0.1:9", INDEXER_LIVE: "false" };
  // The same server twice over the same rows: every answer computed (the cache off), and as it
  // runs by default (an answer served again until a change touches what it read).
  const computing = await createIndexer(parseConfig({ ...env, INDEXER_RESPONSE_CACHE_MS: "0" }), { logger: silentLogger, ingest: false });
  const caching = await createIndexer(parseConfig(env), { logger: silentLogger, ingest: false });
  try {
    const seedStarted = performance.now();
    const reused = KEPT_DATABASE !== "" && (await seeded(computing, EXECUTIONS));
    const subjects = reused ? seededSubjects() : await seedExecutions(computing, { executions: EXECUTIONS });
    const how = reused ? `re-used from ${KEPT_DATABASE}` : `seeded in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`;
    console.log(`\n## GraphQL at ${CLIENTS} concurrent clients over ${EXECUTIONS} seeded executions (${how})`);
    // Statements each server sends: a cached row's share of computed answers is its statements
    // per query over the computed row's.
    const statements = new Map<Indexer, number>();
    for (const indexer of [computing, caching]) {
      const query = indexer.pool.query.bind(indexer.pool) as (...args: unknown[]) => unknown;
      (indexer.pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
        statements.set(indexer, (statements.get(indexer) ?? 0) + 1);
        return query(...args);
      };
    }
    const run = async (indexer: Indexer, make: (i: number) => { query: string; variables: Record<string, unknown> }) => {
      const latencies: number[] = [];
      let counter = 0;
      const sentBefore = statements.get(indexer) ?? 0;
      const deadline = performance.now() + SECONDS * 1000;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (performance.now() < deadline) {
            // A request arrives from a socket: without this turn of the event loop, answers from
            // memory (promises only) would starve the timers and the change feed's socket.
            await new Promise((resolve) => setImmediate(resolve));
            const body = JSON.stringify(make(counter++));
            const started = performance.now();
            const response = await indexer.yoga.fetch("http://bench/graphql", { method: "POST", headers: { "content-type": "application/json" }, body });
            const answer = (await response.json()) as { errors?: unknown };
            if (answer.errors) throw new Error(JSON.stringify(answer.errors));
            latencies.push(performance.now() - started);
          }
        }),
      );
      return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), rate: latencies.length / SECONDS, statementsPerQuery: ((statements.get(indexer) ?? 0) - sentBefore) / latencies.length };
    };
    const cells = (row: { p50: number; p99: number; rate: number }) => `${ms(row.p50)} | ${ms(row.p99)} | ${row.rate.toFixed(0)}`;
    const baseline = await run(computing, () => ({ query: `{ indexer { network } }`, variables: {} }));
    console.log(`(cached, with changes: the notices of ${CHANGES} executions a second of random seeded subjects)`);
    console.log("| query | computed p50 | p99 | queries/s | cached p50 | p99 | queries/s | computed | p99 ÷ baseline | with changes p50 | p99 | queries/s | computed | p99 ÷ baseline |");
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    console.log(`| baseline: { indexer { network } } | ${cells(baseline)} | – | – | – | – | 1.00 | – | – | – | – | – |`);
    for (const [name, make] of DASHBOARD_QUERIES) {
      const computed = await run(computing, (i) => make(subjects, i));
      // Each subject asked once: what a dashboard's visitors have done before the run.
      for (let i = 0; i < subjectCount(subjects, name); i++) {
        await caching.yoga.fetch("http://bench/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(make(subjects, i)) });
      }
      const cached = await run(caching, (i) => make(subjects, i));
      const stop = noticesAt(caching, subjects, CHANGES);
      const changing = await run(caching, (i) => make(subjects, i)).finally(stop);
      const ratio = (row: { p99: number }) => (row.p99 / baseline.p99).toFixed(2);
      const share = (row: { statementsPerQuery: number }) => `${((100 * row.statementsPerQuery) / computed.statementsPerQuery).toFixed(1)}%`;
      console.log(`| ${name} | ${cells(computed)} | ${cells(cached)} | ${share(cached)} | ${ratio(cached)} | ${cells(changing)} | ${share(changing)} | ${ratio(changing)} |`);
    }
  } finally {
    await caching.close();
    await computing.close();
    if (!KEPT_DATABASE) await dropDatabase(url).catch(() => {});
  }
}

const only = arg("only", "lag,backfill,graphql").split(",");
if (only.includes("lag")) await lagRows();
if (only.includes("backfill")) await backfillRow();
if (only.includes("graphql")) await graphqlRows();
process.exit(0);
