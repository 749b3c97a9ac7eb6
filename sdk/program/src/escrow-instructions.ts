// The builders of an execution's escrow, one call at a time: open_escrow, refund, reclaim, and
// subscribe. Every escrow settles through settle_batch (batch-instructions.ts), alone as a batch
// of one.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import type { OpenBatchItem } from "./open-batch-instructions.js";
import { delegatePda, escrowPda, escrowVaultPda, feeShardPda, marketPda, subscriptionPda } from "./pda.js";
import type { RefundReason } from "./types.js";

/**
 * Opens the escrow of one execution. `payer` is the wallet that owns `payerTokenAccount`: it
 * fixes the subscription account the program checks. `maxAmountUsdc` is the price the payer was
 * quoted: the program refuses (PriceAboveMaximum) to charge more, e.g. after `update_agent` raised
 * the price or another call took the last included call of a hybrid plan.
 */
export function openEscrowInstruction(input: {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
} & OpenBatchItem & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "open_escrow",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: input.agent,
      escrowVault: escrowVaultPda(input.agent, input.programId),
      escrow: escrowPda(input.executionId, input.programId),
      payerTokenAccount: input.payerTokenAccount,
      subscription: subscriptionPda(input.agent, input.payer, input.programId),
      delegate: delegatePda(input.programId),
      usdcMint: input.usdcMint,
    },
    {
      executionId: input.executionId,
      apiKeyId: input.apiKeyId,
      requestHash: input.requestHash,
      maxAmountUsdc: input.maxAmountUsdc,
    },
    input.programId,
  );
}

/** What identifies an open escrow for the instructions that close it (all in the Escrow account). */
export interface EscrowRef {
  executionId: Uint8Array;
  agent: PublicKey;
  /** The wallet that pays (the owner of `payerTokenAccount`). */
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  /** Paid the escrow's rent (the relayer that opened it) and gets it back. */
  rentPayer: PublicKey;
}

/** The accounts refund and reclaim share: the escrow, its vault and the payer's account it goes back to. */
function returnedEscrowAccounts(input: { usdcMint: PublicKey; escrow: EscrowRef; withSubscription: boolean } & ProgramOption) {
  const { escrow, programId } = input;
  return {
    market: marketPda(programId),
    agent: escrow.agent,
    escrow: escrowPda(escrow.executionId, programId),
    rentPayer: escrow.rentPayer,
    escrowVault: escrowVaultPda(escrow.agent, programId),
    payerTokenAccount: escrow.payerTokenAccount,
    subscription: input.withSubscription ? subscriptionPda(escrow.agent, escrow.payer, programId) : null,
    usdcMint: input.usdcMint,
  };
}

/**
 * Returns the escrow to its payer. `withSubscription` passes the payer's subscription, which the
 * program requires when the escrow used an included call of a hybrid plan (Escrow.usedIncludedCall).
 */
export function refundInstruction(input: {
  relayer: PublicKey;
  usdcMint: PublicKey;
  escrow: EscrowRef;
  reason: RefundReason;
  withSubscription: boolean;
} & ProgramOption): TransactionInstruction {
  return buildInstruction("refund", { relayer: input.relayer, ...returnedEscrowAccounts(input) }, { reason: input.reason }, input.programId);
}

/** The payer takes back an escrow nobody settled by its deadline; signed by `escrow.payer`. */
export function reclaimInstruction(input: {
  usdcMint: PublicKey;
  escrow: EscrowRef;
  withSubscription: boolean;
} & ProgramOption): TransactionInstruction {
  return buildInstruction("reclaim", { payer: input.escrow.payer, ...returnedEscrowAccounts(input) }, {}, input.programId);
}

/** `maxAmountUsdc` is the period price the payer was shown: the program refuses to charge more. */
export function subscribeInstruction(input: {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  payoutAccount: PublicKey;
  feeShardIndex: number;
  maxAmountUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "subscribe",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: input.agent,
      subscription: subscriptionPda(input.agent, input.payer, input.programId),
      payerTokenAccount: input.payerTokenAccount,
      delegate: delegatePda(input.programId),
      payoutAccount: input.payoutAccount,
      feeShard: feeShardPda(input.feeShardIndex, input.programId),
      usdcMint: input.usdcMint,
    },
    { feeShardIndex: input.feeShardIndex, maxAmountUsdc: input.maxAmountUsdc },
    input.programId,
  );
}
