// What an agent's address lookup table holds: the accounts its batched transactions (open,
// settle, refund) name in every batch, so that a v0 transaction loads them by a one-byte index
// instead of carrying 32 bytes each, and more escrows fit (docs/architecture.md, "Lookup tables").
import { PublicKey, SystemProgram, SYSVAR_INSTRUCTIONS_PUBKEY } from "@solana/web3.js";

import type { ProgramOption } from "./instruction-builder.js";
import { delegatePda, escrowVaultPda, eventAuthorityPda, feeShardPda, marketPda, receiptLogPda } from "./pda.js";
import { FEE_SHARD_COUNT } from "./program.js";

/** The classic SPL Token program, which the program's USDC accounts belong to (as its IDL names it). */
const TOKEN_PROGRAM_ID = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");

/**
 * The accounts every batch of `agent` names besides its escrows and payers: the market, the
 * agent, its vault, receipt log and payout account, the fee shards, the mint, the delegate, the
 * event authority, and the programs and sysvar the instructions pass as accounts. Signers and
 * invoked programs cannot be loaded, so the relayer and the program itself are not here.
 */
export function agentTableAddresses(input: { agent: PublicKey; usdcMint: PublicKey; payoutAccount: PublicKey } & ProgramOption): PublicKey[] {
  const { programId, agent } = input;
  return [
    marketPda(programId),
    agent,
    escrowVaultPda(agent, programId),
    receiptLogPda(agent, programId),
    input.payoutAccount,
    ...Array.from({ length: FEE_SHARD_COUNT }, (_, index) => feeShardPda(index, programId)),
    input.usdcMint,
    delegatePda(programId),
    eventAuthorityPda(programId),
    TOKEN_PROGRAM_ID,
    SystemProgram.programId,
    SYSVAR_INSTRUCTIONS_PUBKEY,
  ];
}
