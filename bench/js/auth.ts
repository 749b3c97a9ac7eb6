// Benchmark of the API-key authentication path against PostgreSQL: verifications per second and
// latency for hot valid keys and for revoked keys at several concurrencies, against a baseline in
// the same run (one query per verification, what the authenticator would do without coalescing),
// and a check that a key is refused on the very first request after its revocation, revoked
// through another relayer's connection pool.
//
//   npm run bench:auth [-- --seconds 3]
import { randomBytes } from "node:crypto";

import {
  ApiKeyAuthenticator,
  ApiKeyStore,
  hashApiKey,
  migrate,
  parseApiKey,
  type Db,
} from "@agent-market/relayer";
import { createPool, dropDatabase, ensureDatabase } from "@agent-market/service";
import { Keypair } from "@solana/web3.js";

const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const secondsArg = process.argv.indexOf("--seconds");
const SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 3;
const CONCURRENCY = [1, 8, 32, 128];
const KEYS = 1000;

interface Result {
  per_sec: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
}

/** Runs `call` from `concurrency` loops for `seconds`, timing each call. */
async function load(concurrency: number, seconds: number, call: (i: number) => Promise<unknown>): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        try {
          await call(i);
        } catch {
          errors += 1;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed_s = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { per_sec: latencies.length / elapsed_s, p50_ms: at(0.5), p99_ms: at(0.99), errors };
}

const fmt = (r: Result) =>
  `${Math.round(r.per_sec).toString().padStart(8)} /s   p50 ${r.p50_ms.toFixed(3).padStart(7)} ms   p99 ${r.p99_ms.toFixed(3).padStart(7)} ms`;

/** The baseline: a query per verification, same checks. */
function naiveVerify(db: Db, secret: Buffer) {
  return async (key: string) => {
    if (parseApiKey(key) === null) throw new Error("malformed");
    const { rows } = await db.query<{ revoked_at: Date | null }>("SELECT revoked_at, expires_at FROM api_keys WHERE key_hash = $1", [
      hashApiKey(key, secret),
    ]);
    if (!rows[0] || rows[0].revoked_at) throw new Error("refused");
  };
}

async function main(): Promise<void> {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/bench_auth_${randomBytes(4).toString("hex")}`;
  await ensureDatabase(url.href);
  const db = createPool(url.href, { max_connections: 10 });
  const otherRelayer = createPool(url.href, { max_connections: 2 });
  try {
    await migrate(db);
    const secret = randomBytes(32);
    const store = new ApiKeyStore(db, secret);
    const wallets = Array.from({ length: 10 }, () => Keypair.generate().publicKey.toBase58());
    const hot: string[] = [];
    const revoked: string[] = [];
    for (let i = 0; i < KEYS; i += 1) {
      const created = await store.create(wallets[i % wallets.length]!, { name: `k${i}`, environment: "test", spending_cap_usdc: null, expires_at: null });
      if (i % 10 === 0) {
        await store.revoke(created.key.wallet, created.key.id);
        revoked.push(created.secret);
      } else {
        hot.push(created.secret);
      }
    }
    const authenticator = new ApiKeyAuthenticator(db, secret);
    const naive = naiveVerify(db, secret);

    console.log(`API key authentication against PostgreSQL, ${SECONDS} s per row, ${hot.length} hot and ${revoked.length} revoked keys`);
    console.log(`node ${process.version}, pool of 10 connections\n`);
    console.log("clients  path                       throughput        latency");
    for (const concurrency of CONCURRENCY) {
      const valid = await load(concurrency, SECONDS, (i) => authenticator.verify(hot[i % hot.length]!));
      const refused = await load(concurrency, SECONDS, async (i) => {
        try {
          await authenticator.verify(revoked[i % revoked.length]!);
        } catch {
          return;
        }
        throw new Error("a revoked key was accepted");
      });
      const baseline = await load(concurrency, SECONDS, (i) => naive(hot[i % hot.length]!));
      console.log(`${String(concurrency).padStart(7)}  valid key (coalesced)    ${fmt(valid)}   errors ${valid.errors}`);
      console.log(`${"".padStart(7)}  revoked key (coalesced)  ${fmt(refused)}   errors ${refused.errors}`);
      console.log(`${"".padStart(7)}  valid key (baseline)     ${fmt(baseline)}   ×${(valid.per_sec / baseline.per_sec).toFixed(2)} throughput vs baseline`);
    }

    // Revocation: each round verifies a key, revokes it through the other relayer's pool, and
    // checks the very next verification here is refused.
    const rounds = 200;
    let refusedFirst = 0;
    for (let i = 0; i < rounds; i += 1) {
      const wallet = wallets[0]!;
      const created = await store.create(wallet, { name: "r", environment: "test", spending_cap_usdc: null, expires_at: null });
      await authenticator.verify(created.secret);
      await new ApiKeyStore(otherRelayer, secret).revoke(wallet, created.key.id);
      try {
        await authenticator.verify(created.secret);
      } catch {
        refusedFirst += 1;
      }
    }
    console.log(`\nrevocation: refused on the first request after revocation in ${refusedFirst}/${rounds} rounds (revoked through another pool)`);
    await authenticator.flushUsage();
  } finally {
    await db.end();
    await otherRelayer.end();
    await dropDatabase(url.href);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
