// What every resolver gets: the database, the network's schema, the clock, and DataLoaders made
// fresh for each request (so one request batches and caches, and never sees another's data).
import DataLoader from "dataloader";

import type { Pool } from "../db/pool.js";
import type { Dimension } from "../ingest/buckets.js";
import { addRow, bucketRows, emptyFigures, windowRange, type Figures, type WindowName } from "./stats.js";

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
      // One query per (dimension, window) among the keys.
      const groups = new Map<string, string[]>();
      for (const key of keys) {
        const [dimension, window, subject] = key.split("\u0000") as [Dimension, WindowName, string];
        const group = `${dimension}\u0000${window}`;
        groups.set(group, [...(groups.get(group) ?? []), subject]);
      }
      const out = new Map<string, Figures>();
      const now = state.nowSecs();
      for (const [group, subjects] of groups) {
        const [dimension, window] = group.split("\u0000") as [Dimension, WindowName];
        const range = windowRange(window, now);
        const rows = await bucketRows(pool, schema, dimension, subjects, range.granularity, range.from);
        for (const subject of subjects) out.set(figuresKey(dimension, window, subject), emptyFigures());
        for (const row of rows) addRow(out.get(figuresKey(dimension, window, row.subject))!, row);
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
