// Money: creators' earnings, the marketplace's fees per shard and what was swept, collateral,
// disputes and slashes, subscriptions.
import { FEE_SHARD_COUNT } from "@agent-market/program";

import { prepared } from "@agent-market/service";
import { connection, connectionTypeDefs, decodeCursor, pageSize } from "./connection.js";
import type { GraphQLContext } from "./context.js";
import { listExecutions } from "./execution.js";
import type { Resolvers } from "./generated/resolvers.js";
import { isoTime, money, signedMoney } from "./money.js";
import { upper, type AgentRecord, type SubscriptionRecord } from "./rows.js";

export const MARKET_TYPE_DEFS = /* GraphQL */ `
  type FeeShard {
    index: Int!
    "Fees paid into the shard by settlements and subscriptions."
    fees: Money!
    swept: Money!
    "Fees less sweeps. Below zero when USDC reached the shard other than as a fee: a sweep takes it all."
    unswept: Money!
  }

  type DisputeCounts {
    open: Int!
    upheld: Int!
    rejected: Int!
  }

  type SubscriptionTotals {
    count: Int!
    amount: Money!
  }

  type Market {
    executions: Int!
    "USDC charged for settled executions: a metered call's charge, not the most it held."
    spent: Money!
    "The marketplace's 1 % of every charge and subscription."
    fees: Money!
    swept: Money!
    feeShards: [FeeShard!]!
    "Collateral held for all agents."
    collateral: Money!
    disputes: DisputeCounts!
    slashed: Money!
    subscriptions: SubscriptionTotals!
  }

  type Creator {
    address: String!
    "Creators' share of settled executions' charges and of subscriptions."
    earnings: Money!
    executionEarnings: Money!
    subscriptionEarnings: Money!
    collateral: Money!
    agents: [Agent!]!
  }

  type AgentSubscription {
    agent: String!
    payer: String!
    amount: Money!
    creatorShare: Money!
    fee: Money!
    expiresAt: String
    includedCalls: Int!
    transaction: TransactionRef!
    commitment: Commitment!
  }
  ${connectionTypeDefs("AgentSubscription")}
`;

async function totals(ctx: GraphQLContext, keys: string[]): Promise<Map<string, { amount: bigint; count: number; maxSlot: number }>> {
  const db = ctx.readingEverything();
  const rows = (await db.query<{ key: string; amount_usdc: string; count: string; max_slot: string }>(prepared(db, `SELECT key, amount_usdc, count, max_slot FROM ${ctx.schema}.totals WHERE key = ANY($1)`, [keys]))).rows;
  const out = new Map(keys.map((key) => [key, { amount: 0n, count: 0, maxSlot: 0 }]));
  for (const row of rows) out.set(row.key, { amount: BigInt(row.amount_usdc), count: Number(row.count), maxSlot: Number(row.max_slot) });
  return out;
}

/** A subject's all-time sums, as PostgreSQL's sum() returns them: decimal strings. */
interface AllTimeSums {
  subject: string;
  executions: string;
  spent_usdc: string;
  earned_usdc: string;
  fee_usdc: string;
  disputes_open: string;
  disputes_upheld: string;
  disputes_rejected: string;
  slashed_usdc: string;
  max_slot: string;
}

/** All-time sums of a dimension's buckets (day buckets: one row per active day). */
async function allTime(ctx: GraphQLContext, dimension: string, subjects: string[]): Promise<Map<string, AllTimeSums>> {
  const db = ctx.readingEverything();
  const rows = (
    await db.query<AllTimeSums>(
      prepared(
        db,
        `SELECT subject, sum(executions) AS executions, sum(spent_usdc) AS spent_usdc, sum(earned_usdc) AS earned_usdc, sum(fee_usdc) AS fee_usdc,
           sum(disputes_open) AS disputes_open, sum(disputes_upheld) AS disputes_upheld, sum(disputes_rejected) AS disputes_rejected,
           sum(slashed_usdc) AS slashed_usdc, coalesce(max(max_slot), 0) AS max_slot
         FROM ${ctx.schema}.buckets WHERE dimension = $1 AND granularity = 'day' AND subject = ANY($2) GROUP BY subject`,
        [dimension, subjects],
      ),
    )
  ).rows;
  return new Map(rows.map((row) => [row.subject, row]));
}

const amount = (row: AllTimeSums | undefined, column: "spent_usdc" | "earned_usdc" | "fee_usdc" | "slashed_usdc") => BigInt(row?.[column] ?? "0");
const slot = (row: AllTimeSums | undefined) => Number(row?.max_slot ?? 0);

export const marketResolvers = {
  Query: {
    market: async (_, __, ctx) => {
      const finality = await ctx.finality();
      const db = ctx.readingEverything();
      const shards = Array.from({ length: FEE_SHARD_COUNT }, (_, i) => String(i));
      const [market, shardSums, sums, collateral] = await Promise.all([
        allTime(ctx, "market", ["all"]),
        allTime(ctx, "shard", shards),
        totals(ctx, ["market:swept", "market:subscriptions", "market:subscription_fees", ...shards.flatMap((i) => [`shard:${i}:swept`, `shard:${i}:subscription_fees`])]),
        db.query<{ collateral: string; max_slot: string }>(prepared(db, `SELECT coalesce(sum(collateral_usdc), 0) AS collateral, coalesce(max(max_slot), 0) AS max_slot FROM ${ctx.schema}.agents`, [])),
      ]);
      const all = market.get("all");
      const swept = sums.get("market:swept")!;
      const subscriptionFees = sums.get("market:subscription_fees")!;
      const subscriptions = sums.get("market:subscriptions")!;
      return {
        executions: Number(all?.executions ?? 0),
        spent: money(amount(all, "spent_usdc"), slot(all), finality),
        fees: money(amount(all, "fee_usdc") + subscriptionFees.amount, Math.max(slot(all), subscriptionFees.maxSlot), finality),
        swept: money(swept.amount, swept.maxSlot, finality),
        feeShards: shards.map((index) => {
          const settled = shardSums.get(index);
          const shardSwept = sums.get(`shard:${index}:swept`)!;
          const shardSubscriptions = sums.get(`shard:${index}:subscription_fees`)!;
          const fees = amount(settled, "fee_usdc") + shardSubscriptions.amount;
          const maxSlot = Math.max(slot(settled), shardSwept.maxSlot, shardSubscriptions.maxSlot);
          return { index: Number(index), fees: money(fees, maxSlot, finality), swept: money(shardSwept.amount, maxSlot, finality), unswept: signedMoney(fees - shardSwept.amount, maxSlot, finality) };
        }),
        collateral: money(String(collateral.rows[0].collateral), Number(collateral.rows[0].max_slot), finality),
        disputes: { open: Number(all?.disputes_open ?? 0), upheld: Number(all?.disputes_upheld ?? 0), rejected: Number(all?.disputes_rejected ?? 0) },
        slashed: money(amount(all, "slashed_usdc"), slot(all), finality),
        subscriptions: { count: subscriptions.count, amount: money(subscriptions.amount, subscriptions.maxSlot, finality) },
      };
    },
    creator: async (_, args, ctx) => {
      const finality = await ctx.finality();
      // Everything: a registration's notice names the agent, not its creator.
      const db = ctx.readingEverything();
      const agents = (await db.query<AgentRecord>(prepared(db, `SELECT * FROM ${ctx.schema}.agents WHERE creator = $1 ORDER BY agent`, [args.address]))).rows;
      for (const row of agents) ctx.loaders.agent.prime(String(row.agent), row);
      const [sums, subscriptionSums] = await Promise.all([
        allTime(ctx, "creator", [args.address]),
        totals(ctx, agents.map((row) => `agent:${String(row.agent)}:subscription_earned`)),
      ]);
      const executions = sums.get(args.address);
      let subscriptionEarned = 0n;
      let subscriptionSlot = 0;
      for (const total of subscriptionSums.values()) {
        subscriptionEarned += total.amount;
        subscriptionSlot = Math.max(subscriptionSlot, total.maxSlot);
      }
      const collateral = agents.reduce((sum, row) => sum + BigInt(String(row.collateral_usdc)), 0n);
      const collateralSlot = agents.reduce((max, row) => Math.max(max, Number(row.max_slot)), 0);
      return {
        address: args.address,
        earnings: money(amount(executions, "earned_usdc") + subscriptionEarned, Math.max(slot(executions), subscriptionSlot), finality),
        executionEarnings: money(amount(executions, "earned_usdc"), slot(executions), finality),
        subscriptionEarnings: money(subscriptionEarned, subscriptionSlot, finality),
        collateral: money(collateral, collateralSlot, finality),
        agents,
      };
    },
    disputes: (_, args, ctx) =>
      listExecutions(ctx, {}, args.first, args.after, { disputed: true, disputeState: args.state }),
    subscriptions: async (_, args, ctx) => {
      const size = pageSize(args.first);
      const cursor = decodeCursor(args.after, ["number", "string", "number"]);
      const params: unknown[] = [];
      const where = ["name = 'Subscribed'"];
      if (args.agent) {
        params.push(args.agent);
        where.push(`agent = $${params.length}`);
      }
      if (args.payer) {
        params.push(args.payer);
        where.push(`data->>'payer' = $${params.length}`);
      }
      if (cursor) {
        params.push(cursor[0], cursor[1], cursor[2]);
        where.push(`(slot, signature, instruction_index) < ($${params.length - 2}, $${params.length - 1}, $${params.length})`);
      }
      params.push(size + 1);
      const db = ctx.readingEverything();
      const rows = (
        await db.query<SubscriptionRecord>(
          prepared(db, `SELECT * FROM ${ctx.schema}.events WHERE ${where.join(" AND ")} ORDER BY slot DESC, signature DESC, instruction_index DESC LIMIT $${params.length}`, params),
        )
      ).rows;
      return connection(rows, size, (row) => [Number(row.slot), String(row.signature), Number(row.instruction_index)]);
    },
  },
  AgentSubscription: {
    agent: (row) => row.agent,
    payer: (row) => row.data.payer,
    amount: async (row, _, ctx) => money(row.data.amountUsdc, Number(row.slot), await ctx.finality()),
    creatorShare: async (row, _, ctx) => money(row.data.creatorShareUsdc, Number(row.slot), await ctx.finality()),
    fee: async (row, _, ctx) => money(row.data.feeUsdc, Number(row.slot), await ctx.finality()),
    expiresAt: (row) => isoTime(row.data.expiresAt),
    includedCalls: (row) => Number(row.data.includedCallsRemaining),
    transaction: (row) => ({ signature: row.signature, slot: Number(row.slot) }),
    commitment: (row) => upper(row.commitment),
  },
} satisfies Resolvers;
