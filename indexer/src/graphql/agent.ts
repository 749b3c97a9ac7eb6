// Agents: status and uptime from on-chain records only, daily buckets for a 90-day chart,
// collateral, and the executions behind every figure.
import { prepared } from "@agent-market/service";
import { DAY_SECS } from "../ingest/buckets.js";
import { bucketRows } from "./bucket-reads.js";
import { connection, connectionTypeDefs, decodeCursor, pageSize } from "./connection.js";
import { windowFigures, windowLatency, type GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import { upper, type AgentRecord } from "./rows.js";
import { listExecutions } from "./execution.js";
import { isoSecs, isoTime, money } from "./money.js";
import { addRow, againstCreator, emptyFigures, latency, rateStatus, statusOf, successRate, WINDOWS, type Figures, type Status, type WindowName } from "./stats.js";
import type { Resolvers } from "./generated/resolvers.js";

export const AGENT_TYPE_DEFS = /* GraphQL */ `
  enum Window { H1 H24 D7 D30 }
  enum AgentStatus { OPERATIONAL DEGRADED DOWN NO_DATA }

  type RefundCounts {
    timeout: Int!
    creatorError: Int!
    invalidSignature: Int!
    outputInvalid: Int!
    relayerError: Int!
    "Refunds counted against the creator (all but relayer errors)."
    againstCreator: Int!
    total: Int!
  }

  type Latency {
    p50: Float
    p95: Float
    samples: Int!
  }

  type AgentStats {
    window: Window!
    executions: Int!
    open: Int!
    settled: Int!
    refunded: RefundCounts!
    "Escrows the payer reclaimed after the relayer never closed them; not counted against the creator."
    reclaimed: Int!
    "settled / (settled + refunds against the creator); null without any."
    successRate: Float
    latencySlots: Latency!
    latencySeconds: Latency!
    "USDC charged for the settled executions: a metered call's charge, not the most it held."
    spent: Money!
    "The creator's 99 % of it."
    earned: Money!
    "The marketplace's 1 % of it."
    fees: Money!
    lastExecution: Execution
    "The executions behind these figures (all in the window, or those of one outcome)."
    behind(first: Int = 20, after: String, outcome: Outcome): ExecutionConnection!
  }

  type DailyBucket {
    day: String!
    executions: Int!
    settled: Int!
    refundedAgainstCreator: Int!
    successRate: Float
    status: AgentStatus!
  }

  type Agent {
    address: String!
    agentId: String
    creator: String
    endpoint: String
    registeredAt: String
    retiredAt: String
    collateral: Money!
    status: AgentStatus!
    stats(window: Window!): AgentStats!
    "The four windows: 1 h, 24 h, 7 d, 30 d."
    uptime: [AgentStats!]!
    daily(days: Int = 90): [DailyBucket!]!
    lastExecution: Execution
    executions(first: Int = 20, after: String, window: Window, outcome: Outcome): ExecutionConnection!
    commitment: Commitment!
  }
  ${connectionTypeDefs("Agent")}
`;

/** A window of an agent; its sums and its latency histograms are loaded by the fields that need them. */
export interface StatsSource {
  agent: string;
  window: WindowName;
}

const stats = (agent: string, window: WindowName): StatsSource => ({ agent, window });
const figuresOf = (s: StatsSource, ctx: GraphQLContext): Promise<Figures> => windowFigures(ctx, "agent", s.window, s.agent);
const latencyOf = (s: StatsSource, ctx: GraphQLContext) => windowLatency(ctx, "agent", s.window, s.agent);

/** A field of AgentStats read from the window's sums. */
const fromFigures =
  <T>(read: (figures: Figures) => T) =>
  async (s: StatsSource, _: unknown, ctx: GraphQLContext): Promise<T> =>
    read(await figuresOf(s, ctx));

/** The status rule over the last hour and the last 24 hours. */
export async function agentStatus(ctx: GraphQLContext, agent: string): Promise<Status> {
  const [hour, day] = await Promise.all([windowFigures(ctx, "agent", "H1", agent), windowFigures(ctx, "agent", "H24", agent)]);
  return statusOf(hour, day);
}

const MAX_DAYS = 366;
const DAILY_COLUMNS = ["executions", "settled", "refunded_timeout", "refunded_creator_error", "refunded_invalid_signature", "refunded_output_invalid"] as const;

export const agentResolvers = {
  Query: {
    agent: (_, args, ctx) => ctx.loaders.agent.load(args.address),
    agents: async (_, args, ctx) => {
      const size = pageSize(args.first);
      const cursor = decodeCursor(args.after, ["string"]);
      const params: unknown[] = [cursor ? cursor[0] : "", size + 1];
      let where = "agent > $1";
      if (args.creator) {
        params.push(args.creator);
        where += ` AND creator = $${params.length}`;
      }
      const db = ctx.readingEverything();
      const rows = (await db.query<AgentRecord>(prepared(db, `SELECT * FROM ${ctx.schema}.agents WHERE ${where} ORDER BY agent LIMIT $2`, params))).rows;
      for (const row of rows) ctx.loaders.agent.prime(row.agent, row);
      return connection(rows, size, (row) => [row.agent]);
    },
  },
  Agent: {
    address: (row) => row.agent,
    agentId: (row) => row.agent_id,
    registeredAt: (row) => isoTime(row.registered_at),
    retiredAt: (row) => isoTime(row.retired_at),
    collateral: async (row, _, ctx) => money(row.collateral_usdc, Number(row.max_slot), await ctx.finality()),
    status: (row, _, ctx) => agentStatus(ctx, row.agent),
    stats: (row, args) => stats(row.agent, args.window),
    uptime: (row) => WINDOWS.map((window) => stats(row.agent, window)),
    daily: async (row, args, ctx) => {
      if (!Number.isInteger(args.days) || args.days < 1 || args.days > MAX_DAYS) throw graphqlError("BAD_USER_INPUT", `days must be between 1 and ${MAX_DAYS}`, { argument: "days" });
      const today = Math.floor(ctx.nowSecs() / DAY_SECS) * DAY_SECS;
      const from = today - (args.days - 1) * DAY_SECS;
      const rows = await bucketRows(ctx.reading("agent", row.agent), ctx.schema, "agent", row.agent, "day", from, today + DAY_SECS, DAILY_COLUMNS);
      const byDay = new Map(rows.map((bucket) => [Number(bucket.bucket_start), addRow(emptyFigures(), bucket)]));
      return Array.from({ length: args.days }, (_, i) => {
        const start = from + i * DAY_SECS;
        const figures = byDay.get(start) ?? emptyFigures();
        const rate = successRate(figures);
        return {
          day: isoSecs(start).slice(0, 10),
          executions: figures.executions,
          settled: figures.settled,
          refundedAgainstCreator: againstCreator(figures),
          successRate: rate,
          status: rateStatus(rate),
        };
      });
    },
    lastExecution: (row, _, ctx) => ctx.loaders.lastExecution.load(`agent\u0000${row.agent}`),
    executions: (row, args, ctx) =>
      listExecutions(ctx, { agent: row.agent, window: args.window, outcome: args.outcome }, args.first, args.after),
    commitment: (row) => upper(row.commitment),
  },
  AgentStats: {
    executions: fromFigures((f) => f.executions),
    open: fromFigures((f) => f.open),
    settled: fromFigures((f) => f.settled),
    refunded: fromFigures((f) => ({
      timeout: f.refundedTimeout,
      creatorError: f.refundedCreatorError,
      invalidSignature: f.refundedInvalidSignature,
      outputInvalid: f.refundedOutputInvalid,
      relayerError: f.refundedRelayerError,
      againstCreator: againstCreator(f),
      total: againstCreator(f) + f.refundedRelayerError,
    })),
    reclaimed: fromFigures((f) => f.reclaimed),
    successRate: fromFigures(successRate),
    latencySlots: async (s, _, ctx) => latency((await latencyOf(s, ctx)).slots),
    latencySeconds: async (s, _, ctx) => latency((await latencyOf(s, ctx)).secs),
    spent: async (s, _, ctx) => {
      const f = await figuresOf(s, ctx);
      return money(f.spentUsdc, f.maxSlot, await ctx.finality());
    },
    earned: async (s, _, ctx) => {
      const f = await figuresOf(s, ctx);
      return money(f.earnedUsdc, f.maxSlot, await ctx.finality());
    },
    fees: async (s, _, ctx) => {
      const f = await figuresOf(s, ctx);
      return money(f.feeUsdc, f.maxSlot, await ctx.finality());
    },
    lastExecution: (s, _, ctx) => ctx.loaders.lastExecution.load(`agent\u0000${s.agent}`),
    behind: (s, args, ctx) =>
      listExecutions(ctx, { agent: s.agent, window: s.window, outcome: args.outcome }, args.first, args.after),
  },
} satisfies Resolvers;
