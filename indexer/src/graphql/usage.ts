// Usage per API key id, payer wallet, agent or creator: totals over a window and hour or day
// buckets for charts, the last on-chain execution, and the executions themselves.
import { DAY_SECS, HOUR_SECS, type Dimension } from "../ingest/buckets.js";
import { bucketRows } from "./bucket-reads.js";
import { windowFigures, type GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import { listExecutions } from "./execution.js";
import { isoSecs, money, parseTime } from "./money.js";
import type { ExecutionFilter, Resolvers, UsageDimension } from "./generated/resolvers.js";
import { addRow, againstCreator, emptyFigures, type Figures } from "./stats.js";

export const USAGE_TYPE_DEFS = /* GraphQL */ `
  enum UsageDimension { API_KEY PAYER AGENT CREATOR }
  enum Granularity { HOUR DAY }

  type UsageFigures {
    executions: Int!
    settled: Int!
    refunded: Int!
    reclaimed: Int!
    "USDC charged for settled executions (payer side): a metered call's charge, not the most it held."
    spent: Money!
    "The creators' 99 % of it."
    earned: Money!
    "The marketplace's 1 % of it."
    fees: Money!
  }

  type UsageBucket {
    start: String!
    executions: Int!
    settled: Int!
    refunded: Int!
    reclaimed: Int!
    spent: Money!
    earned: Money!
    fees: Money!
  }

  type Usage {
    dimension: UsageDimension!
    subject: String!
    totals(window: Window!): UsageFigures!
    "Buckets from \`from\` (default: 24 hours or 30 days back) to \`to\` (default: now), oldest first, empty ones included."
    buckets(granularity: Granularity!, from: String, to: String): [UsageBucket!]!
    lastExecution: Execution
    executions(first: Int = 20, after: String, window: Window): ExecutionConnection!
  }
`;

const DIMENSIONS: Record<UsageDimension, Dimension> = { API_KEY: "api_key", PAYER: "payer", AGENT: "agent", CREATOR: "creator" };
const FILTER_OF: Record<string, keyof ExecutionFilter> = { api_key: "apiKeyId", payer: "payer", agent: "agent", creator: "creator" };
/** Buckets in one answer at most (a 90-day chart by day, or 4 weeks by hour). */
const MAX_BUCKETS = 744;
const BUCKET_COLUMNS = [
  "executions",
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
] as const;

export interface UsageSource {
  /** The schema's name of the dimension, and the buckets' own. */
  name: UsageDimension;
  dimension: Dimension;
  subject: string;
}

async function usageFigures(figures: Figures, ctx: GraphQLContext) {
  const finality = await ctx.finality();
  return {
    executions: figures.executions,
    settled: figures.settled,
    refunded: againstCreator(figures) + figures.refundedRelayerError,
    reclaimed: figures.reclaimed,
    spent: money(figures.spentUsdc, figures.maxSlot, finality),
    earned: money(figures.earnedUsdc, figures.maxSlot, finality),
    fees: money(figures.feeUsdc, figures.maxSlot, finality),
  };
}

export const usageResolvers = {
  Query: {
    usage: (_, args) => ({ name: args.dimension, dimension: DIMENSIONS[args.dimension], subject: args.subject }),
  },
  Usage: {
    dimension: (u) => u.name,
    totals: async (u, args, ctx) =>
      usageFigures(await windowFigures(ctx, u.dimension, args.window, u.subject), ctx),
    buckets: async (u, args, ctx) => {
      const size = args.granularity === "HOUR" ? HOUR_SECS : DAY_SECS;
      const now = ctx.nowSecs();
      const to = Math.floor((args.to ? parseTime(args.to, "to") : now) / size) * size + size;
      const from = Math.floor((args.from ? parseTime(args.from, "from") : to - (args.granularity === "HOUR" ? 24 : 30) * size) / size) * size;
      const count = (to - from) / size;
      if (count < 1 || count > MAX_BUCKETS) throw graphqlError("BAD_USER_INPUT", `from..to must span 1 to ${MAX_BUCKETS} buckets`, { argument: "from" });
      const rows = await bucketRows(ctx.reading(u.dimension, u.subject), ctx.schema, u.dimension, u.subject, args.granularity === "HOUR" ? "hour" : "day", from, to, BUCKET_COLUMNS);
      const byStart = new Map(rows.map((row) => [Number(row.bucket_start), addRow(emptyFigures(), row)]));
      return Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const start = from + i * size;
          return { start: isoSecs(start), ...(await usageFigures(byStart.get(start) ?? emptyFigures(), ctx)) };
        }),
      );
    },
    lastExecution: (u, _, ctx) => ctx.loaders.lastExecution.load(`${u.dimension}\u0000${u.subject}`),
    executions: (u, args, ctx) =>
      listExecutions(ctx, { [FILTER_OF[u.dimension]!]: u.subject, window: args.window }, args.first, args.after),
  },
} satisfies Resolvers;
