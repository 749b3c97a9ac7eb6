// An execution's contribution to the rollups, and the upsert that adds a set of contributions.
// A change to an execution is applied as (new contribution − old contribution), so the rollups
// equal the sum over the current rows without ever being recomputed from them.
import type { Queryable } from "@agent-market/service";

import type { ExecutionRow } from "./execution-view.js";
import { binOf, emptyHistogram } from "./histogram.js";

export const HOUR_SECS = 3600;
export const DAY_SECS = 86_400;
export type Granularity = "hour" | "day";
export type Dimension = "agent" | "creator" | "payer" | "api_key" | "shard" | "market";

export const REFUND_REASONS = ["Timeout", "CreatorError", "InvalidSignature", "OutputInvalid", "RelayerError"] as const;
export type RefundReasonName = (typeof REFUND_REASONS)[number];
/** Column of each refund reason (the IDL's variant names). */
export const REFUND_COLUMNS: Record<RefundReasonName, string> = {
  Timeout: "refunded_timeout",
  CreatorError: "refunded_creator_error",
  InvalidSignature: "refunded_invalid_signature",
  OutputInvalid: "refunded_output_invalid",
  RelayerError: "refunded_relayer_error",
};

const COUNTERS = [
  "executions",
  "open",
  "settled",
  "refunded_timeout",
  "refunded_creator_error",
  "refunded_invalid_signature",
  "refunded_output_invalid",
  "refunded_relayer_error",
  "reclaimed",
  "disputes_open",
  "disputes_upheld",
  "disputes_rejected",
  "latency_count",
] as const;
const AMOUNTS = ["spent_usdc", "earned_usdc", "fee_usdc", "refunded_usdc", "slashed_usdc"] as const;
type Counter = (typeof COUNTERS)[number];
type AmountColumn = (typeof AMOUNTS)[number];

export interface BucketDelta {
  dimension: Dimension;
  subject: string;
  granularity: Granularity;
  bucket_start: number;
  counters: Record<Counter, number>;
  amounts: Record<AmountColumn, bigint>;
  latency_slots_hist: number[];
  latency_secs_hist: number[];
  max_slot: number;
}

function zeroDelta(dimension: Dimension, subject: string, granularity: Granularity, bucketStart: number): BucketDelta {
  return {
    dimension,
    subject,
    granularity,
    bucket_start: bucketStart,
    counters: Object.fromEntries(COUNTERS.map((name) => [name, 0])) as Record<Counter, number>,
    amounts: Object.fromEntries(AMOUNTS.map((name) => [name, 0n])) as Record<AmountColumn, bigint>,
    latency_slots_hist: emptyHistogram(),
    latency_secs_hist: emptyHistogram(),
    max_slot: 0,
  };
}

/** Deltas keyed by bucket, merged so that each bucket is written once per transaction. */
export class BucketDeltas {
  private readonly deltas = new Map<string, BucketDelta>();

  /** Adds `sign` × the execution's contribution to each of its buckets. */
  add(row: ExecutionRow, sign: 1 | -1): void {
    const subjects: [Dimension, string][] = [
      ["agent", row.agent],
      ["payer", row.payer],
      ["market", "all"],
    ];
    if (row.api_key_id) subjects.push(["api_key", row.api_key_id]);
    if (row.creator) subjects.push(["creator", row.creator]);
    if (row.fee_shard !== null && row.state === "settled") subjects.push(["shard", String(row.fee_shard)]);
    const at = row.activity_at;
    for (const [granularity, size] of [
      ["hour", HOUR_SECS],
      ["day", DAY_SECS],
    ] as const) {
      const start = Math.floor(at / size) * size;
      for (const [dimension, subject] of subjects) this.addTo(dimension, subject, granularity, start, row, sign);
    }
  }

  private addTo(dimension: Dimension, subject: string, granularity: Granularity, start: number, row: ExecutionRow, sign: 1 | -1): void {
    const key = `${dimension}\u0000${subject}\u0000${granularity}\u0000${start}`;
    let delta = this.deltas.get(key);
    if (!delta) {
      delta = zeroDelta(dimension, subject, granularity, start);
      this.deltas.set(key, delta);
    }
    const c = delta.counters;
    const a = delta.amounts;
    const s = BigInt(sign);
    c.executions += sign;
    if (row.state === "open") c.open += sign;
    if (row.state === "settled") {
      c.settled += sign;
      // The charge (every settled row has one), not the amount held: a metered call's unused
      // part went back to its payer in the settlement.
      a.spent_usdc += s * BigInt(row.charged_usdc!);
      a.earned_usdc += s * BigInt(row.creator_share_usdc);
      a.fee_usdc += s * BigInt(row.fee_usdc);
      if (row.open_slot !== null && row.close_slot !== null && row.opened_at !== null && row.closed_at !== null) {
        c.latency_count += sign;
        delta.latency_slots_hist[binOf(row.close_slot - row.open_slot)]! += sign;
        delta.latency_secs_hist[binOf(row.closed_at - row.opened_at)]! += sign;
      }
    }
    if (row.state === "refunded") {
      const column = REFUND_COLUMNS[row.refund_reason as RefundReasonName] as Counter | undefined;
      if (column) c[column] += sign;
      a.refunded_usdc += s * BigInt(row.amount_usdc);
    }
    if (row.state === "reclaimed") {
      c.reclaimed += sign;
      a.refunded_usdc += s * BigInt(row.amount_usdc);
    }
    if (row.dispute_state === "open") c.disputes_open += sign;
    if (row.dispute_state === "upheld") c.disputes_upheld += sign;
    if (row.dispute_state === "rejected") c.disputes_rejected += sign;
    a.slashed_usdc += s * BigInt(row.slashed_usdc);
    // Only the upper bound matters (is the bucket final yet?): a removal leaves it.
    delta.max_slot = Math.max(delta.max_slot, row.max_slot);
  }

  get size(): number {
    return this.deltas.size;
  }

  /** One upsert for every bucket touched. */
  async write(db: Queryable, schema: string): Promise<void> {
    if (this.deltas.size === 0) return;
    const rows = [...this.deltas.values()].map((delta) => ({
      dimension: delta.dimension,
      subject: delta.subject,
      granularity: delta.granularity,
      bucket_start: delta.bucket_start,
      ...delta.counters,
      ...Object.fromEntries(AMOUNTS.map((name) => [name, delta.amounts[name].toString()])),
      latency_slots_hist: delta.latency_slots_hist,
      latency_secs_hist: delta.latency_secs_hist,
      max_slot: delta.max_slot,
    }));
    const columns = [...COUNTERS, ...AMOUNTS];
    const recordType = [
      "dimension text",
      "subject text",
      "granularity text",
      "bucket_start bigint",
      ...COUNTERS.map((name) => `${name} bigint`),
      ...AMOUNTS.map((name) => `${name} numeric`),
      "latency_slots_hist bigint[]",
      "latency_secs_hist bigint[]",
      "max_slot bigint",
    ].join(", ");
    const sumArray = (column: string) =>
      `${column} = (SELECT array_agg(coalesce(a, 0) + coalesce(b, 0) ORDER BY n) FROM unnest(b_.${column}, EXCLUDED.${column}) WITH ORDINALITY AS t(a, b, n))`;
    await db.query(
      `INSERT INTO ${schema}.buckets AS b_ (dimension, subject, granularity, bucket_start, ${columns.join(", ")}, latency_slots_hist, latency_secs_hist, max_slot)
       SELECT dimension, subject, granularity, bucket_start, ${columns.join(", ")}, latency_slots_hist, latency_secs_hist, max_slot
       FROM jsonb_to_recordset($1::jsonb) AS r(${recordType})
       ORDER BY dimension, subject, granularity, bucket_start
       ON CONFLICT (dimension, subject, granularity, bucket_start) DO UPDATE SET
         ${columns.map((name) => `${name} = b_.${name} + EXCLUDED.${name}`).join(",\n         ")},
         ${sumArray("latency_slots_hist")},
         ${sumArray("latency_secs_hist")},
         max_slot = greatest(b_.max_slot, EXCLUDED.max_slot)`,
      [JSON.stringify(rows)],
    );
  }
}
