// Legacy (version-less) Solana transactions, compiled and serialized directly. web3.js's
// Transaction takes milliseconds for the same bytes: its message compiler sorts and deduplicates
// accounts by their base58 strings, and serialize() verifies every signature again in
// JavaScript. Plain Uint8Arrays only, so it runs in a browser as well.
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
  index: number;
}

/**
 * The wire bytes of a legacy message: the header (required signatures, read-only signed and
 * read-only unsigned accounts), the account keys, the blockhash, the instructions. `feePayer`
 * is the first account and signer. An account named several times is listed once, a signer if
 * any use signs and writable if any use writes; program ids are read-only non-signers unless
 * also used otherwise. Accounts are ordered writable signers, read-only signers, writable
 * non-signers, read-only non-signers, each group in order of first appearance.
 */
export function compileLegacyMessage(
  feePayer: PublicKey,
  instructions: readonly TransactionInstruction[],
  recentBlockhash: string,
): Uint8Array {
  const accounts = new Map<string, AccountEntry>();
  const use = (pubkey: PublicKey, signer: boolean, writable: boolean): void => {
    const key = keyBytes(pubkey);
    const entry = accounts.get(key.id);
    if (entry) {
      entry.signer ||= signer;
      entry.writable ||= writable;
    } else {
      accounts.set(key.id, { key, signer, writable, index: -1 });
    }
  };
  use(feePayer, true, true);
  for (const ix of instructions) {
    for (const meta of ix.keys) use(meta.pubkey, meta.isSigner, meta.isWritable);
    use(ix.programId, false, false);
  }
  if (accounts.size > MAX_ACCOUNT_KEYS) {
    throw new RangeError(`a legacy transaction names at most ${MAX_ACCOUNT_KEYS} accounts, got ${accounts.size}`);
  }

  const ordered: AccountEntry[] = [];
  for (const signer of [true, false]) {
    for (const writable of [true, false]) {
      for (const entry of accounts.values()) {
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

  let length = 3 + compactU16Length(ordered.length) + 32 * ordered.length + 32;
  length += compactU16Length(instructions.length);
  for (const ix of instructions) {
    length += 1 + compactU16Length(ix.keys.length) + ix.keys.length;
    length += compactU16Length(ix.data.length) + ix.data.length;
  }
  requireFits(signers, length);

  const out = new Uint8Array(length);
  out[0] = signers;
  out[1] = readonlySigners;
  out[2] = readonlyNonSigners;
  let at = writeCompactU16(out, 3, ordered.length);
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
  return out;
}

/** Throws unless `signatures` signatures and a message of `messageLength` bytes fit in a packet. */
function requireFits(signatures: number, messageLength: number): void {
  const length = compactU16Length(signatures) + SIGNATURE_LENGTH * signatures + messageLength;
  if (length > PACKET_DATA_SIZE) {
    throw new RangeError(`the transaction would be ${length} bytes, more than the ${PACKET_DATA_SIZE} a packet carries`);
  }
}

/**
 * The wire bytes of a signed legacy transaction: its signatures, in the order of the message's
 * first account keys (the fee payer's first), then the message.
 */
export function serializeLegacyTransaction(signatures: readonly Uint8Array[], message: Uint8Array): Uint8Array {
  if (signatures.length !== message[0]) {
    throw new RangeError(`the message needs ${message[0]} signatures, got ${signatures.length}`);
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

/** Whether `instructions`, paid and signed by `feePayer` alone, fit one legacy transaction. */
export function fitsLegacyTransaction(feePayer: PublicKey, instructions: readonly TransactionInstruction[]): boolean {
  try {
    // The blockhash's value does not change the size: any 32 bytes, in base58.
    serializeLegacyTransaction([new Uint8Array(SIGNATURE_LENGTH)], compileLegacyMessage(feePayer, instructions, feePayer.toBase58()));
    return true;
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}
