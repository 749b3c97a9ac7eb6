// The schema as SDL text. Committed as indexer/schema.graphql: the contract the relayer's indexer
// client and the dashboard read, whose query types are generated from it (scripts/graphql-types.mjs).
import { printSchema } from "graphql";

import { buildSchema } from "./schema.js";

export function schemaSdl(): string {
  return `${printSchema(buildSchema())}\n`;
}
