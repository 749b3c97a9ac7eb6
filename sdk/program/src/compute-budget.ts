// What a marketplace transaction asks of the compute budget program. A cluster gives every
// instruction 200,000 units unless the transaction says otherwise, charges a priority fee on the
// limit asked for (not on what is used), and refuses a transaction that passes its limit; so
// each transaction asks for the units its instructions are known to use, with a margin, and for
// the unit price its sender chose.
//
// The units are localnet's meter (docs/localnet.md, "Metering"): `npm run bench:units` prints
// them, and tests/compute-budget.test.ts checks on localnet that every estimate below covers what
// the meter charges at the largest batch and at addresses that take many candidate bumps. They
// estimate an SBF run, not measure one: the margin is there for the difference. The random part,
// the candidates the program's address searches try, is counted exactly.
import { ComputeBudgetProgram, PublicKey, TransactionInstruction } from "@solana/web3.js";

import { derivedBump, eventAuthorityPda } from "./pda.js";
import { IDL } from "./program.js";

/** Added to every estimate, in percent. */
export const COMPUTE_UNIT_MARGIN_PERCENT = 25;
/** What the runtime gives an instruction when the transaction asks for nothing. */
export const DEFAULT_INSTRUCTION_UNITS = 200_000;
/** The most a transaction may ask for. */
export const MAX_TRANSACTION_UNITS = 1_400_000;

/** Units of an instruction of the program: a base, and a cost per escrow it opens or settles. */
interface ProgramUnits {
  base: number;
  per_escrow: number;
}

/**
 * Metered units (npm run bench:units and tests/compute-budget.test.ts, 2026-11-28) of the
 * instructions a paid execution sends, the event self-invocations and token transfers they make
 * included, with every address the program searches for found at its first candidate bump: each
 * further candidate costs SEARCH_TRY_UNITS, added per transaction by `searchUnits`. An
 * instruction not listed is given the runtime's default.
 */
const PROGRAM_UNITS: Record<string, ProgramUnits> = {
  open_escrow: { base: 47_100, per_escrow: 0 },
  // 47,071 for 1; each further item 28,446, or 30,885 when its payer is new to the batch: each
  // item creates its escrow, reads its subscription's address, pulls its USDC and emits its event.
  open_escrow_batch: { base: 16_200, per_escrow: 30_900 },
  // 58,385 for 1, 75,724 for 16: one transfer each to the creator and the fee shard and one
  // event whatever the batch; per escrow its digest, its leaf and its account's close.
  settle_batch: { base: 57_300, per_escrow: 1_200 },
  refund: { base: 38_400, per_escrow: 0 },
};

/**
 * Units of each return account of a settle_batch (a metered escrow's rest sent back to its payer):
 * one token transfer each. Measured on localnet's meter (2026-11-28): 12,614 for a batch's first,
 * 11,005 each for four.
 */
export const SETTLE_RETURN_UNITS = 12_700;

/**
 * What the runtime charges a program for each candidate bump it tries when it searches for an
 * address (`find_program_address`): the cost of one `create_program_address`.
 */
export const SEARCH_TRY_UNITS = 1_500;
/**
 * Candidates counted for a searched address this process did not derive itself: the search takes
 * more with odds of 1 in 2^16.
 */
const UNKNOWN_SEARCH_TRIES = 17;

/** The accounts of each listed instruction the program finds by search, by their IDL names. */
const SEARCHED_ACCOUNTS: Record<string, readonly string[]> = { open_escrow: ["escrow", "subscription"] };
/** open_escrow_batch's remaining accounts, three per item: escrow and subscription are searched. */
const BATCH_ITEM_ACCOUNTS = 3;
const BATCH_SEARCHED_OFFSETS = [0, 2];

const idlAccounts = new Map<string, string[]>(
  IDL.instructions.map((instruction) => [instruction.name, instruction.accounts.map((account) => account.name)]),
);

/**
 * The units of the program's address searches in `instruction` (`name`) beyond each one's first
 * candidate: the event authority every event self-invocation signs with (fixed for a program id),
 * and the escrow and subscription of every escrow an open creates (random: 1 in 2 takes a second
 * candidate, 1 in 2^k a (k+1)th), counted exactly from the bumps the builders found.
 */
function searchUnits(instruction: TransactionInstruction, name: string, programId: PublicKey): number {
  const triesOf = (address: PublicKey | undefined): number => {
    const bump = address === undefined ? undefined : derivedBump(address, programId);
    return bump === undefined ? UNKNOWN_SEARCH_TRIES : 255 - bump;
  };
  let tries = triesOf(eventAuthorityPda(programId));
  const accounts = idlAccounts.get(name) ?? [];
  for (const searched of SEARCHED_ACCOUNTS[name] ?? []) tries += triesOf(instruction.keys[accounts.indexOf(searched)]?.pubkey);
  if (name === "open_escrow_batch") {
    for (let item = accounts.length; item < instruction.keys.length; item += BATCH_ITEM_ACCOUNTS) {
      for (const offset of BATCH_SEARCHED_OFFSETS) tries += triesOf(instruction.keys[item + offset]?.pubkey);
    }
  }
  return tries * SEARCH_TRY_UNITS;
}

/**
 * Units of the other programs a marketplace transaction carries: the runtime's builtins at their
 * fixed cost, SPL Token and Associated Token Account (run as SBF on localnet, so metered) at the
 * most their instructions here take (a token account's creation, an approval, a revocation).
 */
const OTHER_PROGRAM_UNITS = new Map<string, number>([
  ["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", 6_000],
  ["ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", 40_000],
  [ComputeBudgetProgram.programId.toBase58(), 150],
  ["11111111111111111111111111111111", 150],
  // The address lookup table program: 750 of its own, and the system program's work it invokes
  // (a table's creation transfers, allocates and assigns; an extension reallocates). A table's
  // creation and extension in one transaction were refused on localnet under 5,000 each and land
  // under this (tests/relayer-lookup-tables.test.ts); a table is made once per agent.
  ["AddressLookupTab1e1111111111111111111111111", 20_000],
  // Precompiles run unmetered: their signatures are paid in the fee.
  ["Ed25519SigVerify111111111111111111111111111", 0],
]);

const instructionNames = new Map<string, string>(
  IDL.instructions.map((instruction) => [Buffer.from(instruction.discriminator).toString("hex"), instruction.name]),
);

/** How many escrows a batched instruction carries: the length of its first vector argument. */
function escrowCount(data: Buffer): number {
  return data.length >= 12 ? data.readUInt32LE(8) : 1;
}

/** The units `instruction` is estimated to use, before the margin. */
function instructionUnits(instruction: TransactionInstruction, programId: PublicKey): number {
  if (instruction.programId.equals(programId)) {
    const name = instructionNames.get(instruction.data.subarray(0, 8).toString("hex"));
    const units = name === undefined ? undefined : PROGRAM_UNITS[name];
    if (name === undefined || !units) return DEFAULT_INSTRUCTION_UNITS;
    const escrows = units.per_escrow > 0 ? escrowCount(instruction.data) : 0;
    // settle_batch's accounts past its own and its escrows are return accounts.
    const returns = name === "settle_batch" ? Math.max(0, instruction.keys.length - (idlAccounts.get(name)?.length ?? 0) - escrows) : 0;
    return units.base + units.per_escrow * escrows + returns * SETTLE_RETURN_UNITS + searchUnits(instruction, name, programId);
  }
  return OTHER_PROGRAM_UNITS.get(instruction.programId.toBase58()) ?? DEFAULT_INSTRUCTION_UNITS;
}

/** The unit limit a transaction of `instructions` asks for: their estimates, with the margin. */
export function computeUnitLimit(instructions: readonly TransactionInstruction[], programId: PublicKey): number {
  const estimated = instructions.reduce((sum, instruction) => sum + instructionUnits(instruction, programId), 0);
  // The limit's own instruction, and the price's when there is one, run before the others.
  const budget = 2 * (OTHER_PROGRAM_UNITS.get(ComputeBudgetProgram.programId.toBase58()) ?? 0);
  return Math.min(MAX_TRANSACTION_UNITS, Math.ceil(((estimated + budget) * (100 + COMPUTE_UNIT_MARGIN_PERCENT)) / 100));
}

/**
 * `instructions` preceded by the compute budget they need: a unit limit sized from their
 * estimates, and a unit price when `microLamportsPerUnit` is above 0 (the priority fee is
 * ⌈price × limit / 1,000,000⌉ lamports). Instructions that already carry a budget are returned
 * as they are.
 */
export function withComputeBudget(
  instructions: readonly TransactionInstruction[],
  programId: PublicKey,
  microLamportsPerUnit = 0n,
): TransactionInstruction[] {
  if (instructions.some((instruction) => instruction.programId.equals(ComputeBudgetProgram.programId))) return [...instructions];
  const budget = [ComputeBudgetProgram.setComputeUnitLimit({ units: computeUnitLimit(instructions, programId) })];
  if (microLamportsPerUnit > 0n) budget.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: microLamportsPerUnit }));
  return [...budget, ...instructions];
}

/** The priority fee, in lamports, a transaction asking for `units` at `microLamportsPerUnit` pays. */
export function priorityFeeLamports(units: number, microLamportsPerUnit: bigint): bigint {
  return (BigInt(units) * microLamportsPerUnit + 999_999n) / 1_000_000n;
}
