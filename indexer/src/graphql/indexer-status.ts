// The indexer's own state for a network: where ingestion is, and the finalized watermark.
import { prepared } from "../db/pool.js";
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
      // The event count is the planner's estimate: an exact count would scan every row.
      const row = (
        await ctx.pool.query(prepared(`SELECT c.*, (SELECT reltuples::bigint FROM pg_class WHERE oid = $1::regclass) AS events FROM ${ctx.schema}.checkpoint c`, [`${ctx.schema}.events`]))
      ).rows[0];
      return {
        network: ctx.network,
        finalizedSlot: Number(row.finalized_slot),
        latestSlot: Number(row.latest_slot),
        checkpointSignature: row.signature,
        checkpointSlot: Number(row.slot),
        events: Math.max(0, Number(row.events ?? 0)),
      };
    },
  },
};
