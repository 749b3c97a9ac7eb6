// Executions: by id, or listed by payer, agent, API key or creator (newest first), with their
// state, what they held, charged and returned, transactions and commitment.
import { prepared } from "@agent-market/service";
import { connection, connectionTypeDefs, decodeCursor, pageSize, type Connection } from "./connection.js";
import type { GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import { upper, type ExecutionRecord } from "./rows.js";
import { receiptProofResolvers } from "./receipt-proof.js";
import { isoTime, money } from "./money.js";
import { windowRange } from "./stats.js";
import type { DisputeState, ExecutionFilter, RefundReason, Resolvers } from "./generated/resolvers.js";

export const EXECUTION_TYPE_DEFS = /* GraphQL */ `
  enum ExecutionState { OPEN SETTLED REFUNDED RECLAIMED }
  enum RefundReason { TIMEOUT CREATOR_ERROR INVALID_SIGNATURE OUTPUT_INVALID RELAYER_ERROR }
  enum Commitment { CONFIRMED FINALIZED }
  enum DisputeState { OPEN UPHELD REJECTED }
  "Which executions behind a figure to list."
  enum Outcome { OPEN SETTLED REFUNDED RECLAIMED AGAINST_CREATOR }

  type TransactionRef {
    signature: String!
    slot: Int!
  }

  type Dispute {
    state: DisputeState!
    openedAt: String
    resolvedAt: String
    slashed: Money!
  }

  type Execution {
    id: ID!
    agent: String!
    payer: String!
    apiKeyId: String
    creator: String
    state: ExecutionState!
    refundReason: RefundReason
    "Held in escrow for the call: a fixed-price call's price, or the most a metered call may cost (max units × price per unit)."
    amount: Money!
    "What each unit of a metered call costs; null for a fixed-price call."
    pricePerUnit: Money
    "The most units a metered call may be charged for (u64, decimal); null for a fixed-price call."
    maxUnits: String
    "The units the creator signed (u64, decimal); null unless settled."
    units: String
    "What the settlement charged, split into creatorShare and fee: the whole amount for a fixed-price call, units × price per unit for a metered one; 0 when refunded or reclaimed; null while open."
    charged: Money
    "What went back to the payer: amount − charged when settled, the whole amount when refunded or reclaimed; null while open."
    returned: Money
    "The creator's 99 % of the charge."
    creatorShare: Money!
    "The marketplace's 1 % of the charge."
    fee: Money!
    feeShard: Int
    usedIncludedCall: Boolean
    openedAt: String
    deadline: String
    closedAt: String
    "Escrow open → settlement, in slots and in seconds of the chain's clock."
    latencySlots: Int
    latencySeconds: Int
    openTransaction: TransactionRef
    closeTransaction: TransactionRef
    dispute: Dispute
    commitment: Commitment!
    agentDetails: Agent
    "The leaf of this execution's settlement and its proof, what open_dispute needs; null if not settled."
    receiptProof: ReceiptProof
    "Every leaf this execution id settled into in its agent's log, oldest first: more than one only if the id was opened again."
    receiptProofs: [ReceiptProof!]!
  }

  input ExecutionFilter {
    agent: String
    payer: String
    apiKeyId: String
    creator: String
    state: ExecutionState
    outcome: Outcome
    window: Window
  }
  ${connectionTypeDefs("Execution")}
`;

const REASONS: Record<string, RefundReason> = {
  Timeout: "TIMEOUT",
  CreatorError: "CREATOR_ERROR",
  InvalidSignature: "INVALID_SIGNATURE",
  OutputInvalid: "OUTPUT_INVALID",
  RelayerError: "RELAYER_ERROR",
};

/** A page of executions, newest first, keyset-paged on (activity_at, id). */
export async function listExecutions(ctx: GraphQLContext, filter: ExecutionFilter, first: number | null | undefined, after: string | null | undefined, extra?: { disputeState?: DisputeState | null; disputed?: boolean }): Promise<Connection<ExecutionRecord>> {
  const size = pageSize(first);
  const cursor = decodeCursor(after, ["number", "string"]);
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace("?", `$${params.length}`));
  };
  if (filter.agent) add("agent = ?", filter.agent);
  if (filter.payer) add("payer = ?", filter.payer);
  if (filter.apiKeyId) add("api_key_id = ?", filter.apiKeyId);
  if (filter.creator) add("creator = ?", filter.creator);
  const state = filter.state ?? (filter.outcome && filter.outcome !== "AGAINST_CREATOR" ? filter.outcome : null);
  if (state) add("state = ?", state.toLowerCase());
  if (filter.outcome === "AGAINST_CREATOR") where.push("state = 'refunded' AND refund_reason IN ('Timeout', 'CreatorError', 'InvalidSignature', 'OutputInvalid')");
  if (filter.window) add("activity_at >= ?", windowRange(filter.window, ctx.nowSecs()).from);
  if (extra?.disputed) where.push("dispute_state IS NOT NULL");
  if (extra?.disputeState) add("dispute_state = ?", extra.disputeState.toLowerCase());
  if (cursor) {
    params.push(cursor[0], cursor[1]);
    where.push(`(activity_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(size + 1);
  // Every row the filter can match has its subject: a change that adds, removes or alters one names it.
  const db = filter.agent
    ? ctx.reading("agent", filter.agent)
    : filter.payer
      ? ctx.reading("payer", filter.payer)
      : filter.apiKeyId
        ? ctx.reading("api_key", filter.apiKeyId)
        : filter.creator
          ? ctx.reading("creator", filter.creator)
          : ctx.readingEverything();
  const rows = (
    await db.query<ExecutionRecord>(
      prepared(
        db,
        `SELECT * FROM ${ctx.schema}.executions ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY activity_at DESC, id DESC LIMIT $${params.length}`,
        params,
      ),
    )
  ).rows;
  for (const row of rows) ctx.loaders.execution.prime(row.id, row);
  return connection(rows, size, (row) => [Number(row.activity_at), row.id]);
}

export const executionResolvers = {
  Query: {
    execution: (_, args, ctx) => {
      if (!args.id.startsWith("exec_")) throw graphqlError("BAD_USER_INPUT", "id is an execution id (exec_…)", { argument: "id" });
      return ctx.loaders.execution.load(args.id);
    },
    executions: (_, args, ctx) =>
      listExecutions(ctx, args.filter ?? {}, args.first, args.after),
  },
  Execution: {
    apiKeyId: (row) => row.api_key_id,
    state: (row) => upper(row.state),
    refundReason: (row) => (row.refund_reason ? REASONS[row.refund_reason] : null),
    amount: async (row, _, ctx) => money(row.amount_usdc, Number(row.max_slot), await ctx.finality()),
    // The program records 0 for a fixed-price call's price per unit and maximum.
    pricePerUnit: async (row, _, ctx) => (row.price_per_unit_usdc === "0" ? null : money(row.price_per_unit_usdc, Number(row.max_slot), await ctx.finality())),
    maxUnits: (row) => (row.price_per_unit_usdc === "0" ? null : row.max_units),
    charged: async (row, _, ctx) => (row.charged_usdc === null ? null : money(row.charged_usdc, Number(row.max_slot), await ctx.finality())),
    returned: async (row, _, ctx) => (row.returned_usdc === null ? null : money(row.returned_usdc, Number(row.max_slot), await ctx.finality())),
    creatorShare: async (row, _, ctx) => money(row.creator_share_usdc, Number(row.max_slot), await ctx.finality()),
    fee: async (row, _, ctx) => money(row.fee_usdc, Number(row.max_slot), await ctx.finality()),
    feeShard: (row) => row.fee_shard,
    usedIncludedCall: (row) => row.used_included_call,
    openedAt: (row) => isoTime(row.opened_at),
    deadline: (row) => isoTime(row.deadline),
    closedAt: (row) => isoTime(row.closed_at),
    latencySlots: (row) => (row.state === "settled" && row.open_slot !== null ? Number(row.close_slot) - Number(row.open_slot) : null),
    latencySeconds: (row) => (row.state === "settled" && row.opened_at !== null ? Number(row.closed_at) - Number(row.opened_at) : null),
    openTransaction: (row) => (row.open_signature ? { signature: row.open_signature, slot: Number(row.open_slot) } : null),
    closeTransaction: (row) => (row.close_signature ? { signature: row.close_signature, slot: Number(row.close_slot) } : null),
    dispute: async (row, _, ctx) =>
      row.dispute_state
        ? {
            state: upper(row.dispute_state),
            openedAt: isoTime(row.dispute_opened_at),
            resolvedAt: isoTime(row.dispute_resolved_at),
            slashed: money(row.slashed_usdc, Number(row.max_slot), await ctx.finality()),
          }
        : null,
    commitment: (row) => upper(row.commitment),
    agentDetails: (row, _, ctx) => ctx.loaders.agent.load(row.agent),
    ...receiptProofResolvers.Execution,
  },
} satisfies Resolvers;
