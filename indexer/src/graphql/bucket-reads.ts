// The reads of the rollup buckets. Sums over windows are done by PostgreSQL, one statement for
// every subject and window a request asks of a dimension, so that a list of agents costs one
// index range scan per agent and window and returns one row per (agent, window); the latency
// histograms, 43 bins each, are summed only when a latency is asked. The statements are named
// (prepared once per connection): planning them costs more than running them.
import { prepared, type Queryable } from "@agent-market/service";
import type { Dimension } from "../ingest/buckets.js";
import { HISTOGRAM_BINS } from "../ingest/histogram.js";
import { windowRange, type WindowName } from "./stats.js";

/** Every column of a bucket but the histograms, as they are named in `Figures`'s `addRow`. */
const SUMMED = [
  "executions",
  "open",
  "settled",
  "refunded_timeout",
  "refunded_creator_error",
  "refunded_invalid_signature",
  "refunded_output_invalid",
  "refunded_relayer_error",
  "reclaimed",
  "spent_usdc",
  "earned_usdc",
  "fee_usdc",
  "refunded_usdc",
  "disputes_open",
  "disputes_upheld",
  "disputes_rejected",
  "slashed_usdc",
  "latency_count",
] as const;
type SummedColumn = (typeof SUMMED)[number];

export type BucketRow = Record<string, unknown> & { bucket_start: string };
export type WindowRow = Record<string, unknown> & { subject: string; window_name: WindowName; slots?: (string | null)[]; secs?: (string | null)[] };

/** The windows as a relation (name, granularity, first bucket) for the statements below. */
function windowParams(windows: readonly WindowName[], nowSecs: number): [string[], string[], number[]] {
  const ranges = windows.map((window) => windowRange(window, nowSecs));
  return [[...windows], ranges.map((range) => range.granularity), ranges.map((range) => range.from)];
}

/**
 * Every (subject, window) pair, each summed by its own index range scan of the primary key
 * (dimension, subject, granularity, bucket_start): the work is the window's buckets, however long
 * the subject's history. A pair without buckets gives one row of nulls.
 */
const PER_WINDOW = (schema: string, sums: string) => `SELECT s.subject, w.name AS window_name, t.*
  FROM unnest($2::text[]) AS s(subject)
  CROSS JOIN unnest($3::text[], $4::text[], $5::bigint[]) AS w(name, granularity, first_start)
  CROSS JOIN LATERAL (
    SELECT ${sums} FROM ${schema}.buckets b
    WHERE b.dimension = $1 AND b.subject = s.subject AND b.granularity = w.granularity AND b.bucket_start >= w.first_start
  ) AS t`;

const SUMS = `${SUMMED.map((name) => `sum(b.${name}) AS ${name}`).join(", ")}, max(b.max_slot) AS max_slot`;
// Bin by bin, without unnesting: one pass over the window's rows.
const bins = (column: string) => `ARRAY[${Array.from({ length: HISTOGRAM_BINS }, (_, i) => `sum(b.${column}[${i + 1}])`).join(", ")}]`;
const HISTOGRAM_SUMS = `${bins("latency_slots_hist")} AS slots, ${bins("latency_secs_hist")} AS secs`;

/** Sums per (subject, window) of every counter and amount, and of the latency histograms if asked. */
export async function readWindows(
  db: Queryable,
  schema: string,
  dimension: Dimension,
  subjects: readonly string[],
  windows: readonly WindowName[],
  nowSecs: number,
  latency: boolean,
): Promise<WindowRow[]> {
  const result = await db.query(prepared(db, PER_WINDOW(schema, latency ? `${SUMS}, ${HISTOGRAM_SUMS}` : SUMS), [dimension, subjects, ...windowParams(windows, nowSecs)]));
  return result.rows as WindowRow[];
}

/**
 * Bucket rows of one subject, from `from` (inclusive) to `to` (exclusive), oldest first: the
 * charts. `columns` are the counters and amounts the chart shows (never the histograms).
 */
export async function bucketRows(
  db: Queryable,
  schema: string,
  dimension: Dimension,
  subject: string,
  granularity: "hour" | "day",
  from: number,
  to: number,
  columns: readonly SummedColumn[],
): Promise<BucketRow[]> {
  const result = await db.query(
    prepared(
      db,
      `SELECT bucket_start, ${columns.join(", ")}, max_slot FROM ${schema}.buckets
       WHERE dimension = $1 AND subject = $2 AND granularity = $3 AND bucket_start >= $4 AND bucket_start < $5
       ORDER BY bucket_start`,
      [dimension, subject, granularity, from, to],
    ),
  );
  return result.rows as BucketRow[];
}
