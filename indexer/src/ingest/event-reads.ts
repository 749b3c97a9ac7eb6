// Stored events read back for the views rebuilt from them, in the order they happened.
import type { EventRecord } from "./execution-view.js";

export const EVENT_COLUMNS = "signature, slot, block_time, commitment, name, execution_id, agent, fee_shard, data";
export const EVENT_ORDER = "ORDER BY slot, signature, instruction_index, inner_index, leaf_offset";

export function eventFromDb(row: Record<string, unknown>): EventRecord {
  return {
    ...(row as unknown as EventRecord),
    slot: Number(row.slot),
    block_time: row.block_time === null ? null : Number(row.block_time),
  };
}
