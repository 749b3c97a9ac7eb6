// The builders of the market's administration: initialize_market, update_market, the authority's
// handover, the fee shards and their sweep.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { feeShardPda, marketPda, programDataPda } from "./pda.js";
import type { MarketParams } from "./types.js";

/** `authority` must be the program's upgrade authority (its ProgramData account names it). */
export function initializeMarketInstruction(input: {
  authority: PublicKey;
  usdcMint: PublicKey;
  treasury: PublicKey;
  params: MarketParams;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "initialize_market",
    {
      authority: input.authority,
      programData: programDataPda(input.programId),
      market: marketPda(input.programId),
      usdcMint: input.usdcMint,
      treasury: input.treasury,
    },
    { params: input.params },
    input.programId,
  );
}

/** Sets the parameters and proposes `newAuthority`, which takes over by signing `acceptMarketAuthorityInstruction`. */
export function updateMarketInstruction(input: {
  authority: PublicKey;
  treasury: PublicKey;
  params: MarketParams;
  newAuthority: PublicKey;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "update_market",
    { authority: input.authority, market: marketPda(input.programId), treasury: input.treasury },
    { params: input.params, newAuthority: input.newAuthority },
    input.programId,
  );
}

/** The proposed authority's acceptance of the market, signed by `newAuthority`. */
export function acceptMarketAuthorityInstruction(input: { newAuthority: PublicKey } & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "accept_market_authority",
    { newAuthority: input.newAuthority, market: marketPda(input.programId) },
    {},
    input.programId,
  );
}

export function createFeeShardInstruction(input: {
  authority: PublicKey;
  usdcMint: PublicKey;
  index: number;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "create_fee_shard",
    {
      authority: input.authority,
      market: marketPda(input.programId),
      feeShard: feeShardPda(input.index, input.programId),
      usdcMint: input.usdcMint,
    },
    { index: input.index },
    input.programId,
  );
}

/** Anyone may send it: the shard's balance can only go to the market's treasury. */
export function sweepFeesInstruction(input: {
  treasury: PublicKey;
  usdcMint: PublicKey;
  index: number;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "sweep_fees",
    {
      market: marketPda(input.programId),
      feeShard: feeShardPda(input.index, input.programId),
      treasury: input.treasury,
      usdcMint: input.usdcMint,
    },
    { index: input.index },
    input.programId,
  );
}
