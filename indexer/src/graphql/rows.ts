// The rows the resolvers read, as PostgreSQL hands them over: numeric and bigint columns as
// decimal strings (never numbers: u64 amounts and slots), smallint as numbers, jsonb parsed. They
// are what the generated resolver types map the schema's objects to (generated/resolvers.ts).
import type { AgentRow } from "../ingest/agent-view.js";
import type { Commitment } from "../ingest/event-row.js";
import type { ExecutionRow } from "../ingest/execution-view.js";

/**
 * A row as it is read back: the writer's numbers in bigint columns come back as decimal strings,
 * those of `Small` columns (smallint) as numbers.
 */
type AsRead<Row, Small extends keyof Row = never> = {
  [K in keyof Row]: K extends Small ? Row[K] : Row[K] extends number ? string : Row[K] extends number | null ? string | null : Row[K];
};

/** A row of `agents`, as the writer stores it (ingest/agent-view.ts). */
export type AgentRecord = AsRead<AgentRow>;

/** A row of `executions`, as the writer stores it (ingest/execution-view.ts). */
export type ExecutionRecord = AsRead<ExecutionRow, "fee_shard">;

/** A `Subscribed` row of `events`: its data as the decoder stored it. */
export interface SubscriptionRecord {
  signature: string;
  instruction_index: number;
  slot: string;
  agent: string;
  commitment: Commitment;
  data: {
    payer: string;
    amountUsdc: string;
    creatorShareUsdc: string;
    feeUsdc: string;
    expiresAt: string | null;
    includedCallsRemaining: string | number;
  };
}

/** The schema's name of a stored lower-case value (`settled` → `SETTLED`). */
export function upper<T extends string>(value: T): Uppercase<T> {
  return value.toUpperCase() as Uppercase<T>;
}
