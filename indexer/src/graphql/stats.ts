// Figures over a trailing window (summed from the rollup buckets by bucket-reads.ts), and the
// status rule.
import { DAY_SECS, HOUR_SECS } from "../ingest/buckets.js";
import { addHistograms, emptyHistogram, LATENCY_EDGES, percentile } from "../ingest/histogram.js";

export type WindowName = "H1" | "H24" | "D7" | "D30";
export const WINDOWS: readonly WindowName[] = ["H1", "H24", "D7", "D30"];

/**
 * Windows are whole buckets: every bucket that started after (now − length), rounded down to
 * the bucket size. H1 and H24 read hour buckets, D7 and D30 day buckets.
 */
export function windowRange(window: WindowName, nowSecs: number): { granularity: "hour" | "day"; from: number } {
  switch (window) {
    case "H1":
      return { granularity: "hour", from: Math.floor((nowSecs - HOUR_SECS) / HOUR_SECS) * HOUR_SECS };
    case "H24":
      return { granularity: "hour", from: Math.floor((nowSecs - DAY_SECS) / HOUR_SECS) * HOUR_SECS };
    case "D7":
      return { granularity: "day", from: Math.floor((nowSecs - 7 * DAY_SECS) / DAY_SECS) * DAY_SECS };
    case "D30":
      return { granularity: "day", from: Math.floor((nowSecs - 30 * DAY_SECS) / DAY_SECS) * DAY_SECS };
  }
}

export interface Figures {
  executions: number;
  open: number;
  settled: number;
  refundedTimeout: number;
  refundedCreatorError: number;
  refundedInvalidSignature: number;
  refundedOutputInvalid: number;
  refundedRelayerError: number;
  reclaimed: number;
  spentUsdc: bigint;
  earnedUsdc: bigint;
  feeUsdc: bigint;
  refundedUsdc: bigint;
  disputesOpen: number;
  disputesUpheld: number;
  disputesRejected: number;
  slashedUsdc: bigint;
  latencyCount: number;
  maxSlot: number;
}

export function emptyFigures(): Figures {
  return {
    executions: 0,
    open: 0,
    settled: 0,
    refundedTimeout: 0,
    refundedCreatorError: 0,
    refundedInvalidSignature: 0,
    refundedOutputInvalid: 0,
    refundedRelayerError: 0,
    reclaimed: 0,
    spentUsdc: 0n,
    earnedUsdc: 0n,
    feeUsdc: 0n,
    refundedUsdc: 0n,
    disputesOpen: 0,
    disputesUpheld: 0,
    disputesRejected: 0,
    slashedUsdc: 0n,
    latencyCount: 0,
    maxSlot: 0,
  };
}

/** Summed latency histograms of a window (read only when a latency is asked). */
export interface LatencyHistograms {
  slots: number[];
  secs: number[];
}

export function latencyHistograms(row?: { slots?: readonly (number | string | null)[] | null; secs?: readonly (number | string | null)[] | null }): LatencyHistograms {
  return { slots: addHistograms(emptyHistogram(), row?.slots ?? []), secs: addHistograms(emptyHistogram(), row?.secs ?? []) };
}

export function addRow(figures: Figures, row: Record<string, unknown>): Figures {
  const n = (name: string) => Number(row[name] ?? 0);
  const b = (name: string) => BigInt(String(row[name] ?? "0"));
  figures.executions += n("executions");
  figures.open += n("open");
  figures.settled += n("settled");
  figures.refundedTimeout += n("refunded_timeout");
  figures.refundedCreatorError += n("refunded_creator_error");
  figures.refundedInvalidSignature += n("refunded_invalid_signature");
  figures.refundedOutputInvalid += n("refunded_output_invalid");
  figures.refundedRelayerError += n("refunded_relayer_error");
  figures.reclaimed += n("reclaimed");
  figures.spentUsdc += b("spent_usdc");
  figures.earnedUsdc += b("earned_usdc");
  figures.feeUsdc += b("fee_usdc");
  figures.refundedUsdc += b("refunded_usdc");
  figures.disputesOpen += n("disputes_open");
  figures.disputesUpheld += n("disputes_upheld");
  figures.disputesRejected += n("disputes_rejected");
  figures.slashedUsdc += b("slashed_usdc");
  figures.latencyCount += n("latency_count");
  figures.maxSlot = Math.max(figures.maxSlot, n("max_slot"));
  return figures;
}

/** Refunds the creator is answerable for: relayer errors and reclaims (the relayer never finished) are not. */
export function againstCreator(figures: Figures): number {
  return figures.refundedTimeout + figures.refundedCreatorError + figures.refundedInvalidSignature + figures.refundedOutputInvalid;
}

/** settled / (settled + refunds against the creator); null without any such outcome. */
export function successRate(figures: Figures): number | null {
  const attempts = figures.settled + againstCreator(figures);
  return attempts === 0 ? null : figures.settled / attempts;
}

export type Status = "OPERATIONAL" | "DEGRADED" | "DOWN" | "NO_DATA";
export const OPERATIONAL_RATE = 0.95;
export const DEGRADED_RATE = 0.8;

/**
 * The status rule: the success rate of the last hour if it has any outcome, else of the last
 * 24 hours; none in 24 hours is NO_DATA. At least 95 % is OPERATIONAL, at least 80 % DEGRADED,
 * below that DOWN.
 */
export function statusOf(hour: Figures, day: Figures): Status {
  const rate = successRate(hour) ?? successRate(day);
  if (rate === null) return "NO_DATA";
  return rateStatus(rate);
}

export function rateStatus(rate: number | null): Status {
  if (rate === null) return "NO_DATA";
  if (rate >= OPERATIONAL_RATE) return "OPERATIONAL";
  if (rate >= DEGRADED_RATE) return "DEGRADED";
  return "DOWN";
}

export function latency(histogram: readonly number[]): { p50: number | null; p95: number | null; samples: number } {
  // The open-ended last bin reads as its lower edge: "at least that".
  const finite = (value: number | null) => (value === null ? null : Number.isFinite(value) ? value : LATENCY_EDGES[LATENCY_EDGES.length - 1]!);
  return { p50: finite(percentile(histogram, 0.5)), p95: finite(percentile(histogram, 0.95)), samples: histogram.reduce((sum, count) => sum + count, 0) };
}
