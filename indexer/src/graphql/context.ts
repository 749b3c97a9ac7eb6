// What every resolver gets: the database, the network's schema, the clock, and DataLoaders made
// fresh for each request (so one request batches and caches, and never sees another's data).
import DataLoader from "dataloader";

import type { Pool } from "../db/pool.js";
import type { Dimension } from "../ingest/buckets.js";
import { addRow, bucketRows, emptyFigures, windowRange, type BucketRow, type Figures, type WindowName } from "./stats.js";

export interface ServerState {
  pool: Pool;
  schema: string;
  network: string;
  production: boolean;
  /** Seconds since the epoch: the windows end now. */
  nowSecs(): number;
}

export type DbRow = Record<string, unknown>;

export interface Loaders {
  agent: DataLoader<string, DbRow | null>;
  execution: DataLoader<string, DbRow | null>;
  /** Key: `${dimension}\0${window}\0${subject}`. */
  figures: DataLoader<string, Figures>;
  lastExecution: DataLoader<string, DbRow | null>;
}

export interface GraphQLContext extends ServerState {
  loaders: Loaders;
  /** The finalized watermark, read once per request. */
  finalizedSlot(): Promise<number>;
}

function byKey<T>(keys: readonly string[], rows: DbRow[], column: string, map: (row: DbRow) => T): (T | null)[] {
  const found = new Map(rows.map((row) => [String(row[column]), map(row)]));
  return keys.map((key) => found.get(key) ?? null);
}

export function figuresKey(dimension: Dimension, window: WindowName, subject: string): string {
  return `${dimension}\u0000${window}\u0000${subject}`;
}

const LAST_EXECUTION_COLUMN: Partial<Record<Dimension, string>> = { agent: "agent", payer: "payer", api_key: "api_key_id", creator: "creator" };

export function createContext(state: ServerState): GraphQLContext {
  const { pool, schema } = state;
  let finalized: Promise<number> | null = null;
  const loaders: Loaders = {
    agent: new DataLoader(async (keys) => {
      const rows = (await pool.query(`SELECT * FROM ${schema}.agents WHERE agent = ANY($1)`, [keys])).rows;
      return byKey(keys, rows, "agent", (row) => row);
    }),
    execution: new DataLoader(async (keys) => {
      const rows = (await pool.query(`SELECT * FROM ${schema}.executions WHERE id = ANY($1)`, [keys])).rows;
      return byKey(keys, rows, "id", (row) => row);
    }),
    figures: new DataLoader(async (keys) => {
      // One read per (dimension, granularity) for every subject and window asked: H1 and H24
      // share the hour buckets since H24's start, D7 and D30 the day buckets since D30's.
      const now = state.nowSecs();
      const wanted = keys.map((key) => key.split("\u0000") as [Dimension, WindowName, string]);
      const out = new Map<string, Figures>(keys.map((key) => [key, emptyFigures()]));
      const groups = new Map<string, { dimension: Dimension; granularity: "hour" | "day"; from: number; subjects: Set<string> }>();
      for (const [dimension, window, subject] of wanted) {
        const range = windowRange(window, now);
        const id = `${dimension}\u0000${range.granularity}`;
        const group = groups.get(id) ?? { dimension, granularity: range.granularity, from: range.from, subjects: new Set<string>() };
        group.from = Math.min(group.from, range.from);
        group.subjects.add(subject);
        groups.set(id, group);
      }
      for (const group of groups.values()) {
        const bySubject = new Map<string, BucketRow[]>();
        for (const row of await bucketRows(pool, schema, group.dimension, [...group.subjects], group.granularity, group.from)) {
          bySubject.set(row.subject, [...(bySubject.get(row.subject) ?? []), row]);
        }
        for (const [dimension, window, subject] of wanted) {
          const range = windowRange(window, now);
          if (dimension !== group.dimension || range.granularity !== group.granularity) continue;
          const figures = out.get(figuresKey(dimension, window, subject))!;
          for (const row of bySubject.get(subject) ?? []) if (Number(row.bucket_start) >= range.from) addRow(figures, row);
        }
      }
      return keys.map((key) => out.get(key)!);
    }),
    lastExecution: new DataLoader(
      async (keys) =>
        Promise.all(
          keys.map(async (key) => {
            const [dimension, subject] = key.split("\u0000") as [Dimension, string];
            const column = LAST_EXECUTION_COLUMN[dimension];
            if (!column) return null;
            const rows = (await pool.query(`SELECT * FROM ${schema}.executions WHERE ${column} = $1 ORDER BY activity_at DESC, id DESC LIMIT 1`, [subject])).rows;
            return rows[0] ?? null;
          }),
        ),
      { batch: false },
    ),
  };
  return {
    ...state,
    loaders,
    finalizedSlot() {
      finalized ??= pool.query(`SELECT finalized_slot FROM ${schema}.checkpoint`).then((result) => Number(result.rows[0]?.finalized_slot ?? 0));
      return finalized;
    },
  };
}
