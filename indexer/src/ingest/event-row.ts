// What the decoder hands the store: the program's events with where they sit in their
// transaction, as plain JSON (u64 as decimal strings, keys in base58, ids in their wire form).

export type Commitment = "confirmed" | "finalized";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface StoredEvent {
  signature: string;
  /** Index of the top-level instruction whose execution emitted it. */
  instructionIndex: number;
  /** Position among that instruction's inner instructions. */
  innerIndex: number;
  /** A settlement batch's leaf: its position in its batch's event (0 for every other event). */
  leafOffset: number;
  slot: number;
  blockTime: number | null;
  name: string;
  data: Record<string, JsonValue>;
  executionId: string | null;
  agent: string | null;
  /** The fee shard named by settle_batch's or subscribe's arguments. */
  feeShard: number | null;
}

export interface DecodedTransaction {
  signature: string;
  slot: number;
  blockTime: number | null;
  /** The transaction's recent blockhash: until it expires, a transaction missing from one read may still land. */
  blockhash: string | null;
  /** The transaction failed: it is kept out of the views (it has no events). */
  failed: boolean;
  events: StoredEvent[];
}
