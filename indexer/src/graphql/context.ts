// What every resolver gets: the database, the network's schema, the clock, and DataLoaders made
// fresh for each request (so one request batches and caches, and never sees another's data).
// Every read names what it reads (answer-scope.ts): the database is reached only through
// `reading`, `readingEverything` or `readingLive`, and the loaders name their keys' subjects.
import { prepared, type Pool, type Queryable } from "@agent-market/service";
import DataLoader from "dataloader";

import type { ChangeFeed } from "../change-feed.js";
import type { Dimension } from "../ingest/buckets.js";
import { AnswerScope, type Finality, type SubjectKind } from "./answer-scope.js";
import { readWindows, type WindowRow } from "./bucket-reads.js";
import type { ReceiptTrees } from "./receipt-trees.js";
import type { AgentRecord, ExecutionRecord } from "./rows.js";
import { addRow, emptyFigures, latencyHistograms, type Figures, type LatencyHistograms, type WindowName } from "./stats.js";

export interface ServerState {
  pool: Pool;
  /** The writer's commits, and the finalized watermark they carry. */
  feed: ChangeFeed;
  schema: string;
  network: string;
  production: boolean;
  /** Seconds since the epoch: the windows end now. */
  nowSecs(): number;
  /**
   * The loaders subscribers share while answering one change of the feed: a thousand
   * subscribers of one agent read it once per change, not a thousand times.
   */
  sharedReads: { generation: number; loaders: Loaders | null };
  /** The agents' receipt log trees, kept across requests for their proofs. */
  receiptTrees: ReceiptTrees;
}

export interface Loaders {
  agent: DataLoader<string, AgentRecord | null>;
  execution: DataLoader<string, ExecutionRecord | null>;
  /** Key: `${windowKey}\0sums` or `${windowKey}\0latency`; read through `windowFigures` and `windowLatency`. */
  windows: DataLoader<string, WindowRow | null>;
  /** Key: `${dimension}\0${subject}`. */
  lastExecution: DataLoader<string, ExecutionRecord | null>;
}

/** A loader as resolvers use it: each key read is named in the request's scope. */
export type ScopedLoader<V> = Pick<DataLoader<string, V>, "load" | "prime">;

export interface ScopedLoaders {
  agent: ScopedLoader<AgentRecord | null>;
  execution: ScopedLoader<ExecutionRecord | null>;
  windows: ScopedLoader<WindowRow | null>;
  lastExecution: ScopedLoader<ExecutionRecord | null>;
}

export interface GraphQLContext extends Omit<ServerState, "pool"> {
  loaders: ScopedLoaders;
  /** What this request has read so far: the response cache keeps its answer by it. */
  scope: AnswerScope;
  /** The database, for a read of one subject's rows (or a rollup dimension's subject's). */
  reading(kind: SubjectKind | Dimension, value: string): Queryable;
  /** The database, for a read no notice names precisely (lists across subjects, totals). */
  readingEverything(): Queryable;
  /** The database, for a read of what moves without a notice (the checkpoint): never kept. */
  readingLive(): Queryable;
  /** The finalized watermark (the feed's, else read once per request), each comparison remembered. */
  finality(): Promise<Finality>;
  /**
   * Forgets what this context read: a subscription's context lives across events, and each
   * event must be answered from the tables as they are after it.
   */
  renew(): void;
}

function byKey<R>(keys: readonly string[], rows: R[], keyOf: (row: R) => string): (R | null)[] {
  const found = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.map((key) => found.get(key) ?? null);
}

export function windowKey(dimension: Dimension, window: WindowName, subject: string): string {
  return `${dimension}\u0000${window}\u0000${subject}`;
}

/** A window's sums (zero without any bucket). */
export async function windowFigures(ctx: GraphQLContext, dimension: Dimension, window: WindowName, subject: string): Promise<Figures> {
  return addRow(emptyFigures(), (await ctx.loaders.windows.load(`${windowKey(dimension, window, subject)}\u0000sums`)) ?? {});
}

/** A window's latency histograms. */
export async function windowLatency(ctx: GraphQLContext, dimension: Dimension, window: WindowName, subject: string): Promise<LatencyHistograms> {
  return latencyHistograms((await ctx.loaders.windows.load(`${windowKey(dimension, window, subject)}\u0000latency`)) ?? undefined);
}

interface WindowGroup {
  subjects: Set<string>;
  windows: Set<WindowName>;
  latency: boolean;
}

/** Splits window keys by dimension: one statement per dimension covers its subjects and windows. */
function byDimension(keys: readonly string[]): Map<Dimension, WindowGroup> {
  const groups = new Map<Dimension, WindowGroup>();
  for (const key of keys) {
    const [dimension, window, subject, part] = key.split("\u0000") as [Dimension, WindowName, string, "sums" | "latency"];
    const group = groups.get(dimension) ?? { subjects: new Set<string>(), windows: new Set<WindowName>(), latency: false };
    group.subjects.add(subject);
    group.windows.add(window);
    group.latency ||= part === "latency";
    groups.set(dimension, group);
  }
  return groups;
}

const LAST_EXECUTION_COLUMN: Partial<Record<Dimension, "agent" | "payer" | "api_key_id" | "creator">> = { agent: "agent", payer: "payer", api_key: "api_key_id", creator: "creator" };

function createLoaders(state: ServerState): Loaders {
  const { pool, schema } = state;
  return {
    agent: new DataLoader(async (keys) => {
      const rows = (await pool.query<AgentRecord>(prepared(pool, `SELECT * FROM ${schema}.agents WHERE agent = ANY($1)`, [keys]))).rows;
      return byKey(keys, rows, (row) => row.agent);
    }),
    execution: new DataLoader(async (keys) => {
      const rows = (await pool.query<ExecutionRecord>(prepared(pool, `SELECT * FROM ${schema}.executions WHERE id = ANY($1)`, [keys]))).rows;
      return byKey(keys, rows, (row) => row.id);
    }),
    windows: new DataLoader(async (keys) => {
      // The sums and, if any field asks, the histograms of every pair: one statement per dimension.
      const now = state.nowSecs();
      const out = new Map<string, WindowRow>();
      await Promise.all(
        [...byDimension(keys)].map(async ([dimension, group]) => {
          for (const row of await readWindows(pool, schema, dimension, [...group.subjects], [...group.windows], now, group.latency)) {
            out.set(windowKey(dimension, row.window_name, row.subject), row);
          }
        }),
      );
      return keys.map((key) => out.get(key.slice(0, key.lastIndexOf("\u0000"))) ?? null);
    }),
    lastExecution: new DataLoader(async (keys) => {
      // One statement per dimension: for each subject, the newest row of its index.
      const out = new Map<string, ExecutionRecord>();
      const subjects = new Map<Dimension, string[]>();
      for (const key of keys) {
        const [dimension, subject] = key.split("\u0000") as [Dimension, string];
        if (LAST_EXECUTION_COLUMN[dimension]) subjects.set(dimension, [...(subjects.get(dimension) ?? []), subject]);
      }
      await Promise.all(
        [...subjects].map(async ([dimension, list]) => {
          const column = LAST_EXECUTION_COLUMN[dimension]!;
          const rows = (
            await pool.query<ExecutionRecord>(
              prepared(
                pool,
                `SELECT e.* FROM unnest($1::text[]) AS s(subject)
                 CROSS JOIN LATERAL (SELECT * FROM ${schema}.executions WHERE ${column} = s.subject ORDER BY activity_at DESC, id DESC LIMIT 1) AS e`,
                [list],
              ),
            )
          ).rows;
          for (const row of rows) out.set(`${dimension}\u0000${String(row[column])}`, row);
        }),
      );
      return keys.map((key) => out.get(key) ?? null);
    }),
  };
}

function scoped<V>(loader: DataLoader<string, V>, scope: () => AnswerScope, name: (scope: AnswerScope, key: string) => void): ScopedLoader<V> {
  return {
    load: (key) => {
      name(scope(), key);
      return loader.load(key);
    },
    prime: (key, value) => loader.prime(key, value),
  } as ScopedLoader<V>;
}

function scopedLoaders(loaders: Loaders, scope: () => AnswerScope): ScopedLoaders {
  return {
    agent: scoped(loaders.agent, scope, (s, address) => s.read("agent", address)),
    execution: scoped(loaders.execution, scope, (s, id) => s.read("execution", id)),
    windows: scoped(loaders.windows, scope, (s, key) => {
      const [dimension, , subject] = key.split("\u0000") as [Dimension, string, string];
      s.read(dimension, subject);
    }),
    lastExecution: scoped(loaders.lastExecution, scope, (s, key) => {
      const [dimension, subject] = key.split("\u0000") as [Dimension, string];
      s.read(dimension, subject);
    }),
  };
}

export function createContext(state: ServerState): GraphQLContext {
  let finalized: Promise<number> | null = null;
  let scope = new AnswerScope();
  const { pool, ...shared } = state;
  return {
    ...shared,
    scope,
    loaders: scopedLoaders(createLoaders(state), () => scope),
    reading(kind, value) {
      scope.read(kind, value);
      return pool;
    },
    readingEverything() {
      scope.readEverything();
      return pool;
    },
    readingLive() {
      scope.readLive();
      return pool;
    },
    async finality() {
      const known = state.feed.finalizedSlot();
      let watermark: number;
      if (known !== null) watermark = known;
      else {
        finalized ??= pool.query(prepared(pool, `SELECT finalized_slot FROM ${state.schema}.checkpoint`, [])).then((result) => Number(result.rows[0]?.finalized_slot ?? 0));
        watermark = await finalized;
      }
      const judged = scope;
      return { isFinal: (slot) => judged.judge(slot, watermark) };
    },
    // Through `this`: graphql-yoga copies the context into its own object.
    renew(this: GraphQLContext) {
      finalized = null;
      scope = new AnswerScope();
      this.scope = scope;
      const reads = state.sharedReads;
      const generation = state.feed.generation();
      if (reads.loaders === null || reads.generation !== generation) {
        reads.generation = generation;
        reads.loaders = createLoaders(state);
      }
      this.loaders = scopedLoaders(reads.loaders, () => scope);
    },
  };
}
