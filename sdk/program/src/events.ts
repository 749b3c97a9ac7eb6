// Decoding the program's events, both forms Anchor has:
// - `emit!`: a "Program data: <base64>" log line (discriminator ‖ Borsh), parsed with anchor's
//   EventParser, which attributes log lines to the program that was running;
// - `emit_cpi!` (what this program uses, since log truncation cannot drop it): an inner
//   instruction from the program to itself, signed by the event authority PDA, whose data is
//   EVENT_IX_TAG_LE ‖ discriminator ‖ Borsh.
import { EventParser } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import { decodeBase58 } from "./base58.js";
import { definedFromAnchor } from "./convert.js";
import { eventAuthorityPda } from "./pda.js";
import { coder } from "./program.js";
import type { AgentMarketEvent } from "./types.js";

/** anchor_lang::event::EVENT_IX_TAG: the first 8 bytes of SHA-256("anchor:event"), read big-endian. */
export const EVENT_IX_TAG = 0x1d9acb512ea545e4n;
/** EVENT_IX_TAG as the instruction data starts with it: little-endian (e4 45 a5 2e 51 cb 9a 1d). */
export const EVENT_IX_TAG_LE: Uint8Array = (() => {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, EVENT_IX_TAG, true);
  return bytes;
})();

function toEvent(decoded: { name: string; data: unknown } | null): AgentMarketEvent | null {
  if (!decoded) return null;
  return { name: decoded.name, data: definedFromAnchor(decoded.name, decoded.data) } as AgentMarketEvent;
}

/** Decodes event bytes (8-byte discriminator ‖ Borsh); null if no event has that discriminator. */
export function decodeEvent(data: Uint8Array): AgentMarketEvent | null {
  return toEvent(coder.events.decode(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64")));
}

/**
 * The program's events logged as "Program data: …" while the program ran (`emit!`), the program
 * being the one at `programId`.
 */
export function eventsFromLogs(logs: readonly string[], programId: PublicKey): AgentMarketEvent[] {
  const parser = new EventParser(programId, coder);
  return Array.from(parser.parseLogs([...logs]), (event) => toEvent(event)!);
}

/**
 * Decodes the data of an `emit_cpi!` self-invocation (EVENT_IX_TAG_LE ‖ discriminator ‖ Borsh);
 * null if it does not start with the tag or carries no known event.
 */
export function decodeCpiEventData(data: Uint8Array): AgentMarketEvent | null {
  if (data.length < EVENT_IX_TAG_LE.length || !EVENT_IX_TAG_LE.every((byte, i) => data[i] === byte)) return null;
  return decodeEvent(data.subarray(EVENT_IX_TAG_LE.length));
}

type KeyLike = PublicKey | string | { pubkey: PublicKey | string };

/** An inner instruction as a transaction response carries it (compiled or jsonParsed). */
export type InnerInstructionLike =
  | { programIdIndex: number; accounts?: readonly number[]; data: string }
  | { programId: PublicKey | string; accounts?: readonly (PublicKey | string)[]; data: string }
  | { programId: PublicKey | string; parsed: unknown };

/**
 * What is read from a transaction: the shape shared by web3.js's VersionedTransactionResponse,
 * TransactionResponse and ParsedTransactionWithMeta (and the JSON-RPC `getTransaction` result).
 */
export interface TransactionWithInnerInstructions {
  transaction: { message: { staticAccountKeys?: readonly PublicKey[]; accountKeys?: readonly KeyLike[] } };
  meta: {
    err?: unknown;
    innerInstructions?: readonly { index: number; instructions: readonly InnerInstructionLike[] }[] | null;
    loadedAddresses?: { writable: readonly (PublicKey | string)[]; readonly: readonly (PublicKey | string)[] } | null;
  } | null;
}

function keyString(key: KeyLike): string {
  if (typeof key === "string") return key;
  if (key instanceof PublicKey) return key.toBase58();
  return keyString(key.pubkey);
}

/** Static keys, then the lookup tables' writable and read-only addresses: what indexes point into. */
function accountKeys(tx: TransactionWithInnerInstructions): string[] {
  const message = tx.transaction.message;
  const keys = (message.staticAccountKeys ?? message.accountKeys ?? []).map(keyString);
  const loaded = tx.meta?.loadedAddresses;
  if (loaded) keys.push(...loaded.writable.map(keyString), ...loaded.readonly.map(keyString));
  return keys;
}

/**
 * The program's `emit_cpi!` events in a transaction, in execution order: inner instructions to
 * the program itself, with the event authority as their account, whose data starts with the
 * event tag. A failed transaction (meta.err set) has none, since its effects did not happen. The
 * program is the one at `programId`: another id's events are not its own.
 */
export function eventsFromInnerInstructions(
  tx: TransactionWithInnerInstructions,
  programId: PublicKey,
): AgentMarketEvent[] {
  const meta = tx.meta;
  if (!meta || (meta.err !== null && meta.err !== undefined)) return [];
  const program = programId.toBase58();
  const eventAuthority = eventAuthorityPda(programId).toBase58();
  let keys: string[] | undefined;
  const events: AgentMarketEvent[] = [];
  const groups = [...(meta.innerInstructions ?? [])].sort((a, b) => a.index - b.index);
  for (const group of groups) {
    for (const ix of group.instructions) {
      if (!("data" in ix)) continue; // a jsonParsed instruction of a known program
      let programId: string;
      let firstAccount: string | undefined;
      if ("programIdIndex" in ix) {
        keys ??= accountKeys(tx);
        programId = keys[ix.programIdIndex] ?? "";
        firstAccount = ix.accounts && ix.accounts.length > 0 ? keys[ix.accounts[0]!] : undefined;
      } else {
        programId = keyString(ix.programId);
        firstAccount = ix.accounts && ix.accounts.length > 0 ? keyString(ix.accounts[0]!) : undefined;
      }
      if (programId !== program) continue;
      if (firstAccount !== undefined && firstAccount !== eventAuthority) continue;
      const event = decodeCpiEventData(decodeBase58(ix.data));
      if (event) events.push(event);
    }
  }
  return events;
}
