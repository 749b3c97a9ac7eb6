// Decoding and fetching the program's accounts with anchor's coder, into camelCase objects with
// bigint amounts (see types.ts).
import type { Commitment, Connection, PublicKey } from "@solana/web3.js";

import { definedFromAnchor } from "./convert.js";
import { IDL, coder } from "./program.js";
import type { AccountData, AccountName, Agent, Dispute, Escrow, Market, Subscription } from "./types.js";
import { marketPda } from "./pda.js";
import type { EscrowRef } from "./escrow-instructions.js";

const ACCOUNT_NAMES = IDL.accounts.map((a) => a.name) as AccountName[];

function startsWith(data: Uint8Array, prefix: readonly number[]): boolean {
  return data.length >= prefix.length && prefix.every((byte, i) => data[i] === byte);
}

/** Which of the program's accounts `data` holds, by its 8-byte discriminator; null if none. */
export function accountNameOf(data: Uint8Array): AccountName | null {
  const found = IDL.accounts.find((a) => startsWith(data, a.discriminator));
  return found ? found.name : null;
}

/** Decodes account data of type `name`; throws if the discriminator is another account's. */
export function decodeAccount<A extends AccountName>(name: A, data: Uint8Array): AccountData<A> {
  if (!ACCOUNT_NAMES.includes(name)) throw new Error(`unknown account type ${name}`);
  const raw: unknown = coder.accounts.decode(name, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  return definedFromAnchor(name, raw) as AccountData<A>;
}

/**
 * How to read an account: the commitment, and the program's address on the cluster, which is
 * required (an account owned by another id is refused, so a wrong default would read nothing).
 */
export interface FetchOptions {
  commitment?: Commitment;
  programId: PublicKey;
}

/**
 * Fetches and decodes account `address` of type `name`. Null if it does not exist; throws if it
 * exists but is not owned by the program (`options.programId`) or is another type of account.
 */
export async function fetchAccount<A extends AccountName>(
  connection: Connection,
  name: A,
  address: PublicKey,
  options: FetchOptions,
): Promise<AccountData<A> | null> {
  // A caller without the type checker may still leave it out: refused before anything is read.
  if (!options?.programId) throw new TypeError(`fetchAccount ${name}: options.programId is required`);
  const { commitment, programId } = options;
  const info = await connection.getAccountInfo(address, commitment);
  if (!info) return null;
  if (!info.owner.equals(programId)) {
    throw new Error(`account ${address.toBase58()} is owned by ${info.owner.toBase58()}, not the program ${programId.toBase58()}`);
  }
  return decodeAccount(name, info.data);
}

export const decodeMarket = (data: Uint8Array): Market => decodeAccount("Market", data);
export const decodeAgent = (data: Uint8Array): Agent => decodeAccount("Agent", data);
export const decodeEscrow = (data: Uint8Array): Escrow => decodeAccount("Escrow", data);
export const decodeSubscription = (data: Uint8Array): Subscription => decodeAccount("Subscription", data);
export const decodeDispute = (data: Uint8Array): Dispute => decodeAccount("Dispute", data);

/** The market (at the program's market PDA when `address` is undefined). */
export function fetchMarket(connection: Connection, address: PublicKey | undefined, options: FetchOptions) {
  return fetchAccount(connection, "Market", address ?? marketPda(options.programId), options);
}
export function fetchAgent(connection: Connection, address: PublicKey, options: FetchOptions) {
  return fetchAccount(connection, "Agent", address, options);
}
export function fetchEscrow(connection: Connection, address: PublicKey, options: FetchOptions) {
  return fetchAccount(connection, "Escrow", address, options);
}
export function fetchSubscription(connection: Connection, address: PublicKey, options: FetchOptions) {
  return fetchAccount(connection, "Subscription", address, options);
}
export function fetchDispute(connection: Connection, address: PublicKey, options: FetchOptions) {
  return fetchAccount(connection, "Dispute", address, options);
}

/** The fields of an Escrow account that settle, refund and reclaim need. */
export function escrowRef(escrow: Escrow): EscrowRef {
  return {
    executionId: escrow.executionId,
    agent: escrow.agent,
    payer: escrow.payer,
    payerTokenAccount: escrow.payerTokenAccount,
    rentPayer: escrow.rentPayer,
  };
}
