// The indexer's own state for a network: where ingestion is, and the finalized watermark.
import { prepared } from "@agent-market/service";
import type { Resolvers } from "./generated/resolvers.js";

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
    "Events stored, exactly: counted by the writer as it stores and removes them."
    events: Int!
  }
`;

/** The network's one row of `checkpoint`: slots and the count as decimal strings. */
interface CheckpointRow {
  finalized_slot: string;
  latest_slot: string;
  signature: string | null;
  slot: string;
  events: string;
}

export const indexerResolvers = {
  Query: {
    indexer: async (_, __, ctx) => {
      const db = ctx.readingLive();
      const row = (await db.query<CheckpointRow>(prepared(db, `SELECT * FROM ${ctx.schema}.checkpoint`, []))).rows[0];
      return {
        network: ctx.network,
        finalizedSlot: Number(row.finalized_slot),
        latestSlot: Number(row.latest_slot),
        checkpointSignature: row.signature,
        checkpointSlot: Number(row.slot),
        events: Number(row.events),
      };
    },
  },
} satisfies Resolvers;
