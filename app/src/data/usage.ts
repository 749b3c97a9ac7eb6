// Usage figures from the indexer: totals and time buckets per API key, payer wallet or agent.
import type { UsageQuery, UsageQueryVariables } from "./generated/graphql.js";
import { graphql } from "./graphql.js";

export type Dimension = "API_KEY" | "PAYER" | "AGENT";
export type Range = "24h" | "7d" | "30d";

/** One time bucket of a subject's usage, as the Usage query reads it. */
export type UsageBucket = UsageQuery["usage"]["buckets"][number];

/** A subject's totals over a window, as the Usage query reads them. */
export type UsageFigures = UsageQuery["usage"]["totals"];

export const RANGES: Record<Range, { window: "H24" | "D7" | "D30"; granularity: "HOUR" | "DAY"; ms: number }> = {
  "24h": { window: "H24", granularity: "HOUR", ms: 24 * 3600_000 },
  "7d": { window: "D7", granularity: "DAY", ms: 7 * 24 * 3600_000 },
  "30d": { window: "D30", granularity: "DAY", ms: 30 * 24 * 3600_000 },
};

const USAGE = /* GraphQL */ `
  query Usage($dimension: UsageDimension!, $subject: String!, $window: Window!, $granularity: Granularity!, $from: String) {
    usage(dimension: $dimension, subject: $subject) {
      totals(window: $window) { executions settled refunded spent { usdc finalized } fees { usdc finalized } }
      buckets(granularity: $granularity, from: $from) { start executions settled refunded spent { usdc finalized } }
    }
  }
`;

export async function fetchUsage(
  url: string | null,
  dimension: Dimension,
  subject: string,
  range: Range,
): Promise<{ totals: UsageFigures; buckets: UsageBucket[] }> {
  const { window, granularity, ms } = RANGES[range];
  const from = new Date(Date.now() - ms).toISOString();
  const variables: UsageQueryVariables = { dimension, subject, window, granularity, from };
  const data = await graphql<UsageQuery>(url, USAGE, variables);
  return data.usage;
}

/** RFC 4180 CSV of the buckets, for a spreadsheet. */
export function usageCsv(subject: string, buckets: readonly UsageBucket[]): string {
  const rows = [["bucket_start", "subject", "executions", "settled", "refunded", "spent_usdc", "finalized"]];
  for (const b of buckets) rows.push([b.start, subject, String(b.executions), String(b.settled), String(b.refunded), b.spent.usdc, String(b.spent.finalized)]);
  return rows.map((row) => row.map((cell) => (/[",\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell)).join(",")).join("\r\n") + "\r\n";
}
