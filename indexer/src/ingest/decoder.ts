// Decodes the program's `emit_cpi!` events from a transaction as JSON-RPC `getTransaction`
// returns it (encoding "json"), which is also the shape of Helius's raw webhook payloads.
//
// An event is an inner instruction whose bytes anyone could reproduce, so the bytes alone prove
// nothing: another program can invoke ours with the same data. What proves an event is who ran
// it. It is accepted only when
//   - the transaction succeeded (a failed one changed nothing, and its events did not happen);
//   - the inner instruction invokes the program itself, with the event authority PDA as its only
//     account: the program's event handler requires that account to sign, and only the program
//     can sign for its own PDA (invoke_signed), so in a successful transaction this pair means
//     the program emitted it;
//   - the instruction that invoked it (one stack level up) is the program too, which is the
//     same signer proof read from the call stack rather than inferred from success;
//   - the data starts with anchor's event tag and carries a known event discriminator.
import { decodeBase58, decodeCpiEventData, eventAuthorityPda, coder, formatExecutionId, leavesOfBatch, type EventData } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import type { DecodedTransaction, JsonValue, StoredEvent } from "./event-row.js";

const bs58 = utils.bytes.bs58;

/** A compiled instruction as getTransaction's "json" encoding writes it. */
export interface RawInstruction {
  programIdIndex: number;
  accounts: number[];
  data: string;
  stackHeight?: number | null;
}

/** getTransaction's result (encoding "json"), the fields read here. */
export interface RawTransaction {
  slot: number;
  blockTime?: number | null;
  transaction: {
    signatures: string[];
    message: { accountKeys: string[]; instructions: RawInstruction[]; recentBlockhash?: string };
  };
  meta: {
    err: unknown;
    innerInstructions?: { index: number; instructions: RawInstruction[] }[] | null;
    loadedAddresses?: { writable: string[]; readonly: string[] } | null;
  } | null;
}


/** Plain JSON from the SDK's decoded values: bigint → string, PublicKey → base58, bytes → hex. */
function toJson(value: unknown): JsonValue {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof PublicKey) return value.toBase58();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  if (Array.isArray(value)) return value.map(toJson);
  if (value !== null && typeof value === "object") {
    const out: Record<string, JsonValue> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = toJson(inner);
    return out;
  }
  return value as JsonValue;
}

function apiKeyId(bytes: Uint8Array): string | null {
  // An escrow opened without a key records zeros.
  return bytes.every((byte) => byte === 0) ? null : `key_${bs58.encode(bytes)}`;
}

/** The events whose instruction (settle_batch, subscribe) names its fee shard in its arguments. */
const FEE_SHARD_EVENTS = new Set(["EscrowsSettledToLog", "Subscribed"]);

/**
 * The name a settlement batch's leaves are stored under, one row each: the program emits one
 * `EscrowsSettledToLog` a batch, carrying every leaf, and each execution's row, rollups and leaf
 * are rebuilt from its own record (its fields, index, the batch's root and its split).
 */
export const SETTLED_LEAF = "EscrowSettledToLog";

/** The fee shard index a settle_batch or subscribe instruction names, from its arguments. */
function feeShardOf(instructionData: string): number | null {
  try {
    const decoded = coder.instruction.decode(Buffer.from(decodeBase58(instructionData)));
    const args = decoded?.data as { fee_shard_index?: number } | undefined;
    return typeof args?.fee_shard_index === "number" ? args.fee_shard_index : null;
  } catch {
    return null;
  }
}

/**
 * The decoder of the program at `programId`: every event of a successful transaction, in
 * execution order. Another program id's events are not this program's, however alike.
 */
export function transactionDecoder(programId: PublicKey): (raw: RawTransaction) => DecodedTransaction {
  const program = programId.toBase58();
  const eventAuthority = eventAuthorityPda(programId).toBase58();
  return (raw) => decodeWith(raw, program, eventAuthority);
}

function decodeWith(raw: RawTransaction, program: string, eventAuthority: string): DecodedTransaction {
  const signature = raw.transaction.signatures[0]!;
  const base = { signature, slot: raw.slot, blockTime: raw.blockTime ?? null };
  const blockhash = raw.transaction.message.recentBlockhash ?? null;
  const meta = raw.meta;
  if (!meta || (meta.err !== null && meta.err !== undefined)) return { ...base, blockhash, failed: true, events: [] };
  const message = raw.transaction.message;
  const keys = [...message.accountKeys, ...(meta.loadedAddresses?.writable ?? []), ...(meta.loadedAddresses?.readonly ?? [])];
  const events: StoredEvent[] = [];
  for (const group of meta.innerInstructions ?? []) {
    const outer = message.instructions[group.index];
    if (!outer) continue;
    // The instruction running at each stack height, the outer one at height 1.
    const stack: RawInstruction[] = [outer];
    group.instructions.forEach((ix, innerIndex) => {
      // Without stackHeight (old transactions), an inner instruction is taken as called by the outer one.
      const height = ix.stackHeight ?? 2;
      const caller = stack[height - 2];
      stack[height - 1] = ix;
      stack.length = height;
      if (keys[ix.programIdIndex] !== program) return;
      if (ix.accounts.length !== 1 || keys[ix.accounts[0]!] !== eventAuthority) return;
      if (!caller || keys[caller.programIdIndex] !== program) return;
      let bytes: Uint8Array;
      try {
        bytes = decodeBase58(ix.data);
      } catch {
        return;
      }
      const event = decodeCpiEventData(bytes);
      if (!event) return;
      const feeShard = FEE_SHARD_EVENTS.has(event.name) ? feeShardOf(caller.data) : null;
      const position = { ...base, instructionIndex: group.index, innerIndex };
      if (event.name === "EscrowsSettledToLog") {
        leavesOfBatch(event.data as EventData<"EscrowsSettledToLog">).forEach((leaf, leafOffset) => {
          events.push({ ...position, leafOffset, feeShard, ...described(SETTLED_LEAF, leaf as unknown as Record<string, unknown>) });
        });
        return;
      }
      events.push({ ...position, leafOffset: 0, feeShard, ...described(event.name, event.data as unknown as Record<string, unknown>) });
    });
  }
  return { ...base, blockhash, failed: false, events };
}

/** An event's fields as stored: plain JSON, the execution id and API key id in their wire form. */
function described(name: string, fields: Record<string, unknown>): Pick<StoredEvent, "name" | "data" | "executionId" | "agent"> {
  const data = toJson(fields) as Record<string, JsonValue>;
  let executionId: string | null = null;
  if (fields.executionId instanceof Uint8Array) {
    executionId = formatExecutionId(fields.executionId);
    data.executionId = executionId;
  }
  if (fields.apiKeyId instanceof Uint8Array) data.apiKeyId = apiKeyId(fields.apiKeyId);
  const agent = fields.agent instanceof PublicKey ? fields.agent.toBase58() : null;
  return { name, data, executionId, agent };
}
