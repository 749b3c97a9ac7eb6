#!/usr/bin/env node
// `npm run reconcile --workspace @agent-market/indexer`: compares the indexer's tables with the
// chain and prints each difference; exits 1 if there is any.
import { createPool } from "@agent-market/service";

import { parseConfig } from "./config.js";
import { SolanaRpc } from "./ingest/rpc.js";
import { reconcile } from "./reconcile.js";

const config = parseConfig();
const pool = createPool(config.database_url, { max_connections: 2 });
try {
  const result = await reconcile(new SolanaRpc(config.rpc_url, { calls_per_second: config.rpc_calls_per_second }), pool, config.schema, config.program_id);
  for (const difference of result.differences) console.log(`${difference.kind} ${difference.key}: ${difference.detail}`);
  console.log(`${result.events} events, ${result.executions} executions checked: ${result.differences.length} differences`);
  process.exitCode = result.differences.length === 0 ? 0 : 1;
} finally {
  await pool.end();
}
