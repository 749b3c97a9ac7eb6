// Solana transactions, legacy and v0 (accounts loaded from address lookup tables), compiled and
// serialized directly. web3.js's Transaction takes milliseconds for the same bytes: its message
// compiler sorts and deduplicates accounts by their base58 strings, and serialize() verifies
// every signature again in JavaScript. Plain Uint8Arrays only, so it runs in a browser as well.
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";

/** The largest transaction a validator accepts, signatures included (an IPv6 packet less its headers). */
export const PACKET_DATA_SIZE = 1232;
/** Instructions name accounts by a one-byte index. */
const MAX_ACCOUNT_KEYS = 256;
const SIGNATURE_LENGTH = 64;

interface KeyBytes {
  bytes: Uint8Array;
  /** The 32 bytes as a string, one character a byte: a cheap Map key. */
  id: string;
}

// The same PublicKey objects (the program id, memoized PDAs, the relayer's key) come back in
// transaction after transaction, and toBytes() converts from a bignum every time.
const keyBytesOf = new WeakMap<PublicKey, KeyBytes>();

function keyBytes(pubkey: PublicKey): KeyBytes {
  let key = keyBytesOf.get(pubkey);
  if (!key) {
    const bytes = pubkey.toBytes();
    key = { bytes, id: String.fromCharCode(...bytes) };
    keyBytesOf.set(pubkey, key);
  }
  return key;
}

// A relayer signs every transaction of the next seconds with the same blockhash.
let lastBlockhash: { text: string; bytes: Uint8Array } | undefined;

function blockhashBytes(recentBlockhash: string): Uint8Array {
  if (lastBlockhash?.text !== recentBlockhash) {
    let bytes: Uint8Array;
    try {
      // A blockhash is 32 bytes in base58, like an address.
      bytes = new PublicKey(recentBlockhash).toBytes();
    } catch {
      throw new TypeError(`not a base58 blockhash of 32 bytes: ${recentBlockhash}`);
    }
    lastBlockhash = { text: recentBlockhash, bytes };
  }
  return lastBlockhash.bytes;
}

function compactU16Length(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : 3;
}

/** Writes `value` as Solana's compact-u16 (7 bits a byte, low bits first) at `at`; returns the next offset. */
function writeCompactU16(out: Uint8Array, at: number, value: number): number {
  for (;;) {
    const low = value & 0x7f;
    value >>= 7;
    if (value === 0) {
      out[at] = low;
      return at + 1;
    }
    out[at++] = low | 0x80;
  }
}

interface AccountEntry {
  key: KeyBytes;
  signer: boolean;
  writable: boolean;
  /** Invoked as an instruction's program: such an account cannot be loaded from a table. */
  invoked: boolean;
  index: number;
}

/** An address lookup table as a v0 message uses it: its address and the addresses it holds, in order. */
export interface LookupTable {
  key: PublicKey;
  addresses: readonly PublicKey[];
}

/**
 * Every account the instructions name, once each: a signer if any use signs, writable if any
 * use writes; the fee payer first.
 */
function collectAccounts(feePayer: PublicKey, instructions: readonly TransactionInstruction[]): Map<string, AccountEntry> {
  const accounts = new Map<string, AccountEntry>();
  const use = (pubkey: PublicKey, signer: boolean, writable: boolean, invoked: boolean): void => {
    const key = keyBytes(pubkey);
    const entry = accounts.get(key.id);
    if (entry) {
      entry.signer ||= signer;
      entry.writable ||= writable;
      entry.invoked ||= invoked;
    } else {
      accounts.set(key.id, { key, signer, writable, invoked, index: -1 });
    }
  };
  use(feePayer, true, true, false);
  for (const ix of instructions) {
    for (const meta of ix.keys) use(meta.pubkey, meta.isSigner, meta.isWritable, false);
    use(ix.programId, false, false, true);
  }
  return accounts;
}

/**
 * The static keys in message order (writable signers, read-only signers, writable non-signers,
 * read-only non-signers, each group in order of first appearance), indexed from 0, and the
 * header's three counts.
 */
function orderStatic(entries: Iterable<AccountEntry>): { ordered: AccountEntry[]; header: [number, number, number] } {
  const all = [...entries];
  const ordered: AccountEntry[] = [];
  for (const signer of [true, false]) {
    for (const writable of [true, false]) {
      for (const entry of all) {
        if (entry.signer === signer && entry.writable === writable) {
          entry.index = ordered.length;
          ordered.push(entry);
        }
      }
    }
  }
  let signers = 0;
  let readonlySigners = 0;
  let readonlyNonSigners = 0;
  for (const entry of ordered) {
    if (entry.signer) signers++;
    if (!entry.writable) {
      if (entry.signer) readonlySigners++;
      else readonlyNonSigners++;
    }
  }
  return { ordered, header: [signers, readonlySigners, readonlyNonSigners] };
}

function instructionsLength(instructions: readonly TransactionInstruction[]): number {
  let length = compactU16Length(instructions.length);
  for (const ix of instructions) {
    length += 1 + compactU16Length(ix.keys.length) + ix.keys.length;
    length += compactU16Length(ix.data.length) + ix.data.length;
  }
  return length;
}

/** Writes the static keys, the blockhash and the instructions from `at`; returns the next offset. */
function writeBody(
  out: Uint8Array,
  at: number,
  ordered: readonly AccountEntry[],
  recentBlockhash: string,
  instructions: readonly TransactionInstruction[],
  accounts: Map<string, AccountEntry>,
): number {
  at = writeCompactU16(out, at, ordered.length);
  for (const entry of ordered) {
    out.set(entry.key.bytes, at);
    at += 32;
  }
  out.set(blockhashBytes(recentBlockhash), at);
  at += 32;
  at = writeCompactU16(out, at, instructions.length);
  const indexOf = (pubkey: PublicKey): number => accounts.get(keyBytes(pubkey).id)!.index;
  for (const ix of instructions) {
    out[at++] = indexOf(ix.programId);
    at = writeCompactU16(out, at, ix.keys.length);
    for (const meta of ix.keys) out[at++] = indexOf(meta.pubkey);
    at = writeCompactU16(out, at, ix.data.length);
    out.set(ix.data, at);
    at += ix.data.length;
  }
  return at;
}

/**
 * The wire bytes of a legacy message: the header (required signatures, read-only signed and
 * read-only unsigned accounts), the account keys, the blockhash, the instructions. `feePayer`
 * is the first account and signer; program ids are read-only non-signers unless also used
 * otherwise.
 */
export function compileLegacyMessage(
  feePayer: PublicKey,
  instructions: readonly TransactionInstruction[],
  recentBlockhash: string,
): Uint8Array {
  const accounts = collectAccounts(feePayer, instructions);
  if (accounts.size > MAX_ACCOUNT_KEYS) {
    throw new RangeError(`a legacy transaction names at most ${MAX_ACCOUNT_KEYS} accounts, got ${accounts.size}`);
  }
  const { ordered, header } = orderStatic(accounts.values());
  const length = 3 + compactU16Length(ordered.length) + 32 * ordered.length + 32 + instructionsLength(instructions);
  requireFits(header[0], length);
  const out = new Uint8Array(length);
  out.set(header, 0);
  writeBody(out, 3, ordered, recentBlockhash, instructions, accounts);
  return out;
}

/** The first byte of a versioned message: the high bit set, then the version (0). */
const V0_PREFIX = 0x80;

/**
 * The wire bytes of a v0 message: as a legacy one after a version byte, then the lookups. An
 * account neither signing nor invoked as a program that one of `tables` holds is loaded from the
 * first that does (one byte instead of 32); the others are static. Instructions index the static
 * keys, then every table's loaded writable accounts, then every table's loaded read-only ones.
 * Tables that load nothing are left out.
 */
export function compileV0Message(
  feePayer: PublicKey,
  instructions: readonly TransactionInstruction[],
  recentBlockhash: string,
  tables: readonly LookupTable[],
): Uint8Array {
  const accounts = collectAccounts(feePayer, instructions);
  const loaded = tables.map(() => ({ writable: [] as { entry: AccountEntry; at: number }[], readonly: [] as { entry: AccountEntry; at: number }[] }));
  const staticEntries: AccountEntry[] = [];
  for (const entry of accounts.values()) {
    const found = entry.signer || entry.invoked ? undefined : findInTables(tables, entry.key.id);
    if (!found) staticEntries.push(entry);
    else (entry.writable ? loaded[found.table]!.writable : loaded[found.table]!.readonly).push({ entry, at: found.at });
  }
  const { ordered, header } = orderStatic(staticEntries);
  let next = ordered.length;
  for (const table of loaded) for (const { entry } of table.writable) entry.index = next++;
  for (const table of loaded) for (const { entry } of table.readonly) entry.index = next++;
  if (next > MAX_ACCOUNT_KEYS) {
    throw new RangeError(`a transaction names at most ${MAX_ACCOUNT_KEYS} accounts, got ${next}`);
  }
  const used = tables.flatMap((table, i) => (loaded[i]!.writable.length + loaded[i]!.readonly.length > 0 ? [{ table, ...loaded[i]! }] : []));
  let length = 1 + 3 + compactU16Length(ordered.length) + 32 * ordered.length + 32 + instructionsLength(instructions);
  length += compactU16Length(used.length);
  for (const lookup of used) {
    length += 32 + compactU16Length(lookup.writable.length) + lookup.writable.length;
    length += compactU16Length(lookup.readonly.length) + lookup.readonly.length;
  }
  requireFits(header[0], length);
  const out = new Uint8Array(length);
  out[0] = V0_PREFIX;
  out.set(header, 1);
  let at = writeBody(out, 4, ordered, recentBlockhash, instructions, accounts);
  at = writeCompactU16(out, at, used.length);
  for (const lookup of used) {
    out.set(keyBytes(lookup.table.key).bytes, at);
    at += 32;
    for (const indexes of [lookup.writable, lookup.readonly]) {
      at = writeCompactU16(out, at, indexes.length);
      for (const { at: index } of indexes) out[at++] = index;
    }
  }
  return out;
}

/** The first table holding the key, and where in it (a table holds at most 256 addresses). */
function findInTables(tables: readonly LookupTable[], id: string): { table: number; at: number } | undefined {
  for (let table = 0; table < tables.length; table++) {
    const addresses = tables[table]!.addresses;
    const limit = Math.min(addresses.length, MAX_ACCOUNT_KEYS);
    for (let at = 0; at < limit; at++) if (keyBytes(addresses[at]!).id === id) return { table, at };
  }
  return undefined;
}

/** How many signatures a compiled message (legacy or v0) requires. */
function requiredSignatures(message: Uint8Array): number {
  return message[0] === V0_PREFIX ? message[1]! : message[0]!;
}

/** Throws unless `signatures` signatures and a message of `messageLength` bytes fit in a packet. */
function requireFits(signatures: number, messageLength: number): void {
  const length = compactU16Length(signatures) + SIGNATURE_LENGTH * signatures + messageLength;
  if (length > PACKET_DATA_SIZE) {
    throw new RangeError(`the transaction would be ${length} bytes, more than the ${PACKET_DATA_SIZE} a packet carries`);
  }
}

/**
 * The wire bytes of a signed transaction, legacy or v0: its signatures, in the order of the
 * message's first account keys (the fee payer's first), then the message.
 */
export function serializeTransaction(signatures: readonly Uint8Array[], message: Uint8Array): Uint8Array {
  const required = requiredSignatures(message);
  if (signatures.length !== required) {
    throw new RangeError(`the message needs ${required} signatures, got ${signatures.length}`);
  }
  requireFits(signatures.length, message.length);
  const out = new Uint8Array(compactU16Length(signatures.length) + SIGNATURE_LENGTH * signatures.length + message.length);
  let at = writeCompactU16(out, 0, signatures.length);
  for (const signature of signatures) {
    if (signature.length !== SIGNATURE_LENGTH) throw new RangeError(`a signature is 64 bytes, got ${signature.length}`);
    out.set(signature, at);
    at += SIGNATURE_LENGTH;
  }
  out.set(message, at);
  return out;
}

/**
 * Whether `instructions`, paid and signed by `feePayer` alone, fit one transaction: legacy, or
 * v0 loading what it can from `tables` when there are any.
 */
export function fitsTransaction(feePayer: PublicKey, instructions: readonly TransactionInstruction[], tables: readonly LookupTable[] = []): boolean {
  try {
    // The blockhash's value does not change the size: any 32 bytes, in base58.
    const message = compileMessage(feePayer, instructions, feePayer.toBase58(), tables);
    serializeTransaction([new Uint8Array(SIGNATURE_LENGTH)], message);
    return true;
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/** A v0 message when there are tables to load from, else a legacy one. */
export function compileMessage(
  feePayer: PublicKey,
  instructions: readonly TransactionInstruction[],
  recentBlockhash: string,
  tables: readonly LookupTable[],
): Uint8Array {
  return tables.length > 0
    ? compileV0Message(feePayer, instructions, recentBlockhash, tables)
    : compileLegacyMessage(feePayer, instructions, recentBlockhash);
}
