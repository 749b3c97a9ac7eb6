// Executions and their rollups written straight into an indexer's database, as ingestion would
// have built them: the way the benchmarks get a history of 100,000 or 1,000,000 executions
// without running them on a chain. Shared by the indexer's and the dashboard's benchmarks.
import type { Indexer } from "@agent-market/indexer";

export interface SeedOptions {
  executions: number;
  /** The wallet that paid every execution; without it, 20,000 payers share them. */
  payer?: string;
  /**
   * When they happened: one a second back from now ("second", the default), or spread evenly
   * over the last 30 days ("even", so that every day and hour of a 30-day chart has some).
   */
  spacing?: "second" | "even";
  /**
   * Moves the indexer's checkpoint past them so that they read as finalized (the default). Off
   * for an indexer following a live chain, whose checkpoint is its own.
   */
  finalize?: boolean;
}

export interface SeededSubjects {
  agents: string[];
  payers: string[];
  keys: string[];
}

const SPAN_SECS = 30 * 86_400;
/** How many agents the executions are spread over. */
export const SEEDED_AGENTS = 1000;

/** The subjects the dashboard's queries ask about, among those seeded. */
export function seededSubjects(payer?: string): SeededSubjects {
  return {
    agents: Array.from({ length: SEEDED_AGENTS }, (_, i) => `agent${i}`),
    payers: payer === undefined ? Array.from({ length: 100 }, (_, i) => `payer${i}`) : [payer],
    keys: Array.from({ length: 100 }, (_, i) => `key_${i}`),
  };
}

export async function seedExecutions(indexer: Indexer, options: SeedOptions): Promise<SeededSubjects> {
  const s = indexer.config.schema;
  const now = Math.floor(Date.now() / 1000);
  const at = options.spacing === "even" ? `$1 - (i::bigint * $2 / $3)` : `$1 - (i % $2)`;
  await indexer.pool.query(
    `INSERT INTO ${s}.executions (id, agent, payer, api_key_id, creator, state, refund_reason, amount_usdc, creator_share_usdc, fee_usdc, fee_shard,
       opened_at, closed_at, open_signature, open_slot, close_signature, close_slot, activity_at, max_slot, commitment)
     SELECT 'exec_' || i, 'agent' || (i % ${SEEDED_AGENTS}), coalesce($4, 'payer' || (i % 20000)), 'key_' || (i % 50000), 'creator' || (i % 300),
       CASE WHEN i % 20 = 0 THEN 'refunded' ELSE 'settled' END, CASE WHEN i % 20 = 0 THEN 'CreatorError' END,
       250000, CASE WHEN i % 20 = 0 THEN 0 ELSE 237500 END, CASE WHEN i % 20 = 0 THEN 0 ELSE 12500 END, i % 8,
       ${at}, ${at} + 2, 'sig' || i, i, 'sig' || i || 'c', i + 5, ${at}, i + 5, 'finalized'
     FROM generate_series(1, $3) AS i`,
    [now, SPAN_SECS, options.executions, options.payer ?? null],
  );
  for (const [dimension, column] of [
    ["agent", "agent"],
    ["payer", "payer"],
    ["api_key", "api_key_id"],
    ["creator", "creator"],
    ["market", "'all'"],
  ]) {
    for (const [granularity, size] of [
      ["hour", 3600],
      ["day", 86400],
    ] as const) {
      await indexer.pool.query(
        `INSERT INTO ${s}.buckets (dimension, subject, granularity, bucket_start, executions, settled, refunded_creator_error, spent_usdc, earned_usdc, fee_usdc,
           latency_count, latency_slots_hist, latency_secs_hist, max_slot)
         SELECT $1, ${column}, $2, (activity_at / $3) * $3, count(*), count(*) FILTER (WHERE state = 'settled'), count(*) FILTER (WHERE state = 'refunded'),
           coalesce(sum(amount_usdc) FILTER (WHERE state = 'settled'), 0), sum(creator_share_usdc), sum(fee_usdc), count(*) FILTER (WHERE state = 'settled'),
           array_fill(0::bigint, ARRAY[5]) || ARRAY[count(*) FILTER (WHERE state = 'settled')] || array_fill(0::bigint, ARRAY[37]),
           array_fill(0::bigint, ARRAY[2]) || ARRAY[count(*) FILTER (WHERE state = 'settled')] || array_fill(0::bigint, ARRAY[40]),
           max(max_slot)
         FROM ${s}.executions GROUP BY 1, 2, 3, 4`,
        [dimension, granularity, size],
      );
    }
  }
  await indexer.pool.query(
    `INSERT INTO ${s}.agents (agent, creator, collateral_usdc, max_slot, commitment) SELECT 'agent' || i, 'creator' || (i % 300), 100000000, 1, 'finalized' FROM generate_series(0, $1 - 1) AS i`,
    [SEEDED_AGENTS],
  );
  if (options.finalize ?? true) {
    await indexer.pool.query(`UPDATE ${s}.checkpoint SET latest_slot = $1`, [options.executions + 10]);
    // Through the store: the servers keep the watermark it announces.
    await indexer.store.setFinalizedSlot(options.executions + 10);
  }
  await indexer.pool.query(`ANALYZE`);
  return seededSubjects(options.payer);
}
