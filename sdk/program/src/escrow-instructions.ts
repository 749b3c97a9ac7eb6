// The builders of an execution's escrow, one call at a time: open_escrow, settle (with the Ed25519
// precompile instruction verifying the creator's signature over the result digest), refund,
// reclaim, and subscribe.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { resultDigest } from "./digest.js";
import { ed25519VerifyInstruction } from "./ed25519-instruction.js";
import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import type { OpenBatchItem } from "./open-batch-instructions.js";
import { delegatePda, escrowPda, escrowVaultPda, feeShardPda, marketPda, receiptPda, subscriptionPda } from "./pda.js";
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

export interface SettleInput extends ProgramOption {
  relayer: PublicKey;
  usdcMint: PublicKey;
  escrow: EscrowRef;
  /** The agent's payout account (Agent.payoutAccount). */
  payoutAccount: PublicKey;
  /** `outputHash(output)`. */
  resultHash: Uint8Array;
  /** Which fee shard (0 ‥ FEE_SHARD_COUNT - 1) receives the fee. */
  feeShardIndex: number;
}

/** `settle` alone; it needs `ed25519VerifyInstruction` right before it (see settleInstructions). */
export function settleInstruction(input: SettleInput): TransactionInstruction {
  const { escrow } = input;
  return buildInstruction(
    "settle",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: escrow.agent,
      escrow: escrowPda(escrow.executionId, input.programId),
      rentPayer: escrow.rentPayer,
      receipt: receiptPda(escrow.executionId, input.programId),
      escrowVault: escrowVaultPda(escrow.agent, input.programId),
      payoutAccount: input.payoutAccount,
      feeShard: feeShardPda(input.feeShardIndex, input.programId),
      usdcMint: input.usdcMint,
    },
    { resultHash: input.resultHash, feeShardIndex: input.feeShardIndex },
    input.programId,
  );
}

/**
 * `[Ed25519 verification, settle]`, to be sent in this order in one transaction. The digest is
 * computed here from the escrow's execution id and agent, `requestHash` (Escrow.requestHash) and
 * `resultHash`, exactly as the program recomputes it.
 */
export function settleInstructions(
  input: SettleInput & {
    /** The escrow's request hash (Escrow.requestHash). */
    requestHash: Uint8Array;
    /** The agent's registered Ed25519 key (Agent.signingKey). */
    signingKey: Uint8Array;
    /** The creator's signature over the result digest. */
    signature: Uint8Array;
  },
): [TransactionInstruction, TransactionInstruction] {
  const digest = resultDigest(input.escrow.executionId, input.escrow.agent, input.requestHash, input.resultHash);
  return [ed25519VerifyInstruction(input.signingKey, input.signature, digest), settleInstruction(input)];
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
