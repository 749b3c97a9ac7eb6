// Executions: by id, or listed by payer, agent, API key or creator (newest first), with their
// state, amounts, transactions and commitment.
import { prepared } from "@agent-market/service";
import { connection, connectionTypeDefs, decodeCursor, pageSize, type Connection } from "./connection.js";
import type { DbRow, GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import { receiptProofResolvers } from "./receipt-proof.js";
import { isoTime, money } from "./money.js";
import { windowRange, type WindowName } from "./stats.js";

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
    amount: Money!
    creatorShare: Money!
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
    "For an execution settled by settle_batch, what open_dispute_from_log needs; null for one settled by settle or not settled."
    receiptProof: ReceiptProof
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

const REASONS: Record<string, string> = {
  Timeout: "TIMEOUT",
  CreatorError: "CREATOR_ERROR",
  InvalidSignature: "INVALID_SIGNATURE",
  OutputInvalid: "OUTPUT_INVALID",
  RelayerError: "RELAYER_ERROR",
};

export interface ExecutionFilter {
  agent?: string | null;
  payer?: string | null;
  apiKeyId?: string | null;
  creator?: string | null;
  state?: "OPEN" | "SETTLED" | "REFUNDED" | "RECLAIMED" | null;
  outcome?: "OPEN" | "SETTLED" | "REFUNDED" | "RECLAIMED" | "AGAINST_CREATOR" | null;
  window?: WindowName | null;
}

/** A page of executions, newest first, keyset-paged on (activity_at, id). */
export async function listExecutions(ctx: GraphQLContext, filter: ExecutionFilter, first: number | null | undefined, after: string | null | undefined, extra?: { disputeState?: string | null; disputed?: boolean }): Promise<Connection<DbRow>> {
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
  const rows = (
    await ctx.pool.query(
      prepared(
        ctx.pool,
        `SELECT * FROM ${ctx.schema}.executions ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY activity_at DESC, id DESC LIMIT $${params.length}`,
        params,
      ),
    )
  ).rows;
  for (const row of rows) ctx.loaders.execution.prime(String(row.id), row);
  return connection(rows, size, (row) => [Number(row.activity_at), String(row.id)]);
}

const n = (value: unknown) => (value === null || value === undefined ? null : Number(value));

export const executionResolvers = {
  Query: {
    execution: (_: unknown, args: { id: string }, ctx: GraphQLContext) => {
      if (!args.id.startsWith("exec_")) throw graphqlError("BAD_USER_INPUT", "id is an execution id (exec_…)", { argument: "id" });
      return ctx.loaders.execution.load(args.id);
    },
    executions: (_: unknown, args: { first?: number; after?: string; filter?: ExecutionFilter }, ctx: GraphQLContext) =>
      listExecutions(ctx, args.filter ?? {}, args.first, args.after),
  },
  Execution: {
    apiKeyId: (row: DbRow) => row.api_key_id,
    state: (row: DbRow) => String(row.state).toUpperCase(),
    refundReason: (row: DbRow) => (row.refund_reason ? REASONS[String(row.refund_reason)] : null),
    amount: async (row: DbRow, _: unknown, ctx: GraphQLContext) => money(String(row.amount_usdc), Number(row.max_slot), await ctx.finalizedSlot()),
    creatorShare: async (row: DbRow, _: unknown, ctx: GraphQLContext) => money(String(row.creator_share_usdc), Number(row.max_slot), await ctx.finalizedSlot()),
    fee: async (row: DbRow, _: unknown, ctx: GraphQLContext) => money(String(row.fee_usdc), Number(row.max_slot), await ctx.finalizedSlot()),
    feeShard: (row: DbRow) => n(row.fee_shard),
    usedIncludedCall: (row: DbRow) => row.used_included_call,
    openedAt: (row: DbRow) => isoTime(row.opened_at as string | null),
    deadline: (row: DbRow) => isoTime(row.deadline as string | null),
    closedAt: (row: DbRow) => isoTime(row.closed_at as string | null),
    latencySlots: (row: DbRow) => (row.state === "settled" && row.open_slot !== null ? Number(row.close_slot) - Number(row.open_slot) : null),
    latencySeconds: (row: DbRow) => (row.state === "settled" && row.opened_at !== null ? Number(row.closed_at) - Number(row.opened_at) : null),
    openTransaction: (row: DbRow) => (row.open_signature ? { signature: row.open_signature, slot: Number(row.open_slot) } : null),
    closeTransaction: (row: DbRow) => (row.close_signature ? { signature: row.close_signature, slot: Number(row.close_slot) } : null),
    dispute: async (row: DbRow, _: unknown, ctx: GraphQLContext) =>
      row.dispute_state
        ? {
            state: String(row.dispute_state).toUpperCase(),
            openedAt: isoTime(row.dispute_opened_at as string | null),
            resolvedAt: isoTime(row.dispute_resolved_at as string | null),
            slashed: money(String(row.slashed_usdc), Number(row.max_slot), await ctx.finalizedSlot()),
          }
        : null,
    commitment: (row: DbRow) => String(row.commitment).toUpperCase(),
    agentDetails: (row: DbRow, _: unknown, ctx: GraphQLContext) => ctx.loaders.agent.load(String(row.agent)),
    receiptProof: receiptProofResolvers.receiptProof,
  },
};
