// A whole local marketplace for the benchmarks that drive the relayer: its own database and queue,
// localnet at 100 ms slots, the payer funded and its allowance raised for every call of a run, and
// the in-flight limits lifted (the benchmarks send many calls on one key to one agent on purpose).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { rpc, startLocalMarketplace, type LocalMarketplace } from "@agent-market/local";
import { dropDatabase, ensureDatabase, freePortBlock } from "@agent-market/service";

import { raiseAllowance } from "./setup.js";

const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface BenchMarketplace {
  marketplace: LocalMarketplace;
  database_url: string;
  data_dir: string;
  stop(): Promise<void>;
}

export async function startBenchMarketplace(options: {
  /** Names the database and the queue. */
  name: string;
  relayer_env?: Record<string, string>;
  relayer_node_options?: string[];
}): Promise<BenchMarketplace> {
  const database = new URL(POSTGRES_URL);
  database.pathname = `/bench_${options.name}_${randomBytes(4).toString("hex")}`;
  await ensureDatabase(database.href);
  const data_dir = mkdtempSync(join(tmpdir(), `bench-${options.name}-`));
  // localnet's JSON-RPC and PubSub (its port + 1), the relayer, then the four example agents and the
  // starter host in a row.
  const rpc_port = await freePortBlock(8);
  const marketplace = await startLocalMarketplace({
    data_dir,
    rpc_port,
    relayer_port: rpc_port + 2,
    agent_port: rpc_port + 3,
    slot_ms: 100,
    database_url: database.href,
    redis_url: REDIS_URL,
    relayer_env: {
      QUEUE_NAME: `bench-${randomBytes(4).toString("hex")}`,
      EXECUTIONS_IN_FLIGHT_PER_KEY: "100000",
      EXECUTIONS_IN_FLIGHT_PER_AGENT: "100000",
      ...options.relayer_env,
    },
    ...(options.relayer_node_options ? { relayer_node_options: options.relayer_node_options } : {}),
    log: (line) => console.error(`· ${line}`),
  });
  await rpc(marketplace.rpc_url, "localnet_mintUsdc", [marketplace.wallet.publicKey.toBase58(), 100_000_000_000]);
  await raiseAllowance(marketplace.relayer_url, marketplace.rpc_url, marketplace.wallet, "100000.000000");
  return {
    marketplace,
    database_url: database.href,
    data_dir,
    async stop() {
      await marketplace.stop();
      await dropDatabase(database.href);
      // The chain's ledger: about 2.6 KB per transaction.
      rmSync(data_dir, { recursive: true, force: true });
    },
  };
}
