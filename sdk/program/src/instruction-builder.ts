// The one way an instruction of the program is built: accounts in the IDL's order with its
// signer and writable flags, data from anchor's coder. The builders of each instruction
// (market-, agent-, escrow- and dispute-instructions.ts, and the batched ones) take the same
// inputs as their twins in localnet/src/market.rs and return the same accounts in the same order
// (tests/vectors/golden.json holds both sides to that).
import { PublicKey, TransactionInstruction, type AccountMeta } from "@solana/web3.js";

import { idlCamelCase, toAnchor, type IdlTypeJson } from "./convert.js";
import { eventAuthorityPda } from "./pda.js";
import { coder, IDL } from "./program.js";
import type { InstructionName } from "./types.js";

type IdlAccountJson = { name: string; writable?: boolean; signer?: boolean; optional?: boolean; address?: string };
type IdlInstructionJson = { name: string; accounts: IdlAccountJson[]; args: { name: string; type: IdlTypeJson }[] };

const instructionDefs = new Map<string, IdlInstructionJson>(
  (IDL.instructions as unknown as IdlInstructionJson[]).map((ix) => [ix.name, ix]),
);

/** Accounts every builder fills in itself: fixed addresses, and the two `#[event_cpi]` adds. */
function implicitAccount(account: IdlAccountJson, programId: PublicKey): PublicKey | undefined {
  if (account.address) return new PublicKey(account.address);
  if (account.name === "event_authority") return eventAuthorityPda(programId);
  if (account.name === "program") return programId;
  return undefined;
}

/**
 * Builds instruction `name` from its accounts (camelCase names, `null` for an optional account
 * left out) and arguments (camelCase names, this package's value shapes). Every account the IDL
 * lists must be given, except fixed addresses, `eventAuthority` and `program`; an optional
 * account left out is passed as the program id, read-only, as Anchor expects. `programId` is the
 * program's address on the cluster.
 */
export function buildInstruction(
  name: InstructionName,
  accounts: Record<string, PublicKey | null>,
  args: Record<string, unknown>,
  programId: PublicKey,
): TransactionInstruction {
  const def = instructionDefs.get(name);
  if (!def) throw new Error(`IDL has no instruction ${name}`);
  const used = new Set<string>();
  const keys: AccountMeta[] = def.accounts.map((account) => {
    const implicit = implicitAccount(account, programId);
    if (implicit) return { pubkey: implicit, isSigner: Boolean(account.signer), isWritable: Boolean(account.writable) };
    const key = idlCamelCase(account.name);
    const pubkey = accounts[key];
    used.add(key);
    if (pubkey === null && account.optional) return { pubkey: programId, isSigner: false, isWritable: false };
    if (!(pubkey instanceof PublicKey)) throw new TypeError(`${name}: account ${key} must be a PublicKey`);
    return { pubkey, isSigner: Boolean(account.signer), isWritable: Boolean(account.writable) };
  });
  const unknown = Object.keys(accounts).filter((key) => !used.has(key));
  if (unknown.length > 0) throw new TypeError(`${name}: unknown accounts ${unknown.join(", ")}`);

  const anchorArgs: Record<string, unknown> = {};
  for (const arg of def.args) {
    const key = idlCamelCase(arg.name);
    if (!(key in args)) throw new TypeError(`${name}: argument ${key} is missing`);
    anchorArgs[arg.name] = toAnchor(arg.type, args[key], `${name}.${key}`);
  }
  const data = coder.instruction.encode(name, anchorArgs);
  return new TransactionInstruction({ programId, keys, data });
}

/**
 * Every builder takes the program's address on the cluster it targets, since devnet and mainnet
 * may run the program at different ids. It is required: a caller that means the IDL's address
 * (localnet loads the program there) passes PROGRAM_ID itself.
 */
export interface ProgramOption {
  programId: PublicKey;
}
