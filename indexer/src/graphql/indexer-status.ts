// The indexer's own state for a network: where ingestion is, and the finalized watermark.
import type { GraphQLContext } from "./context.js";

export const INDEXER_TYPE_DEFS = /* GraphQL */ `
  type IndexerStatus {
    network: String!
    "Every event at or below this slot is finalized (or was removed with its dropped fork)."
    finalizedSlot: Int!
    "The newest slot of an ingested transaction."
    latestSlot: Int!
    "The backfill resumes after this signature."
    checkpointSignature: String
    checkpointSlot: Int!
    events: Int!
  }
`;

export const indexerResolvers = {
  Query: {
    indexer: async (_: unknown, __: unknown, ctx: GraphQLContext) => {
      const row = (await ctx.pool.query(`SELECT * FROM ${ctx.schema}.checkpoint`)).rows[0];
      // An estimate from the planner's statistics: exact counts would scan every row.
      const estimate = await ctx.pool.query(`SELECT reltuples::bigint AS n FROM pg_class WHERE oid = $1::regclass`, [`${ctx.schema}.events`]);
      return {
        network: ctx.network,
        finalizedSlot: Number(row.finalized_slot),
        latestSlot: Number(row.latest_slot),
        checkpointSignature: row.signature,
        checkpointSlot: Number(row.slot),
        events: Math.max(0, Number(estimate.rows[0]?.n ?? 0)),
      };
    },
  },
};
