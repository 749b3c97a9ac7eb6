// Builders of the batched settlement path (docs/program.md, "Batched settlement"): the receipt
// log an agent's batches append to, `settle_batch`, and the payer's dispute proven from the log.
import { type PublicKey, type TransactionInstruction } from "@solana/web3.js";

import { batchDigest, resultDigest } from "./digest.js";
import { ed25519VerifyInstruction } from "./ed25519-instruction.js";
import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { escrowPda, escrowVaultPda, feeShardPda, marketPda, disputePda, receiptLogPda, receiptPda } from "./pda.js";
import type { ReceiptLeaf } from "./types.js";

/** Creates `agent`'s receipt log; anyone may, and `payer` pays its rent once. */
export function createReceiptLogInstruction(input: { payer: PublicKey; agent: PublicKey } & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "create_receipt_log",
    { payer: input.payer, agent: input.agent, receiptLog: receiptLogPda(input.agent, input.programId) },
    {},
    input.programId,
  );
}

export interface SettleBatchInput extends ProgramOption {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  /** The agent's payout account (Agent.payoutAccount). */
  payoutAccount: PublicKey;
  /** The escrows to settle, all of `agent` and opened by `relayer`, in the order of `resultHashes`. */
  executionIds: Uint8Array[];
  resultHashes: Uint8Array[];
  feeShardIndex: number;
}

/**
 * `settle_batch` alone: it needs, right before it, an Ed25519 verification by the agent's key of
 * the batch digest (one signature) or of each escrow's result digest in order.
 */
export function settleBatchInstruction(input: SettleBatchInput): TransactionInstruction {
  const instruction = buildInstruction(
    "settle_batch",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: input.agent,
      receiptLog: receiptLogPda(input.agent, input.programId),
      escrowVault: escrowVaultPda(input.agent, input.programId),
      payoutAccount: input.payoutAccount,
      feeShard: feeShardPda(input.feeShardIndex, input.programId),
      usdcMint: input.usdcMint,
    },
    { resultHashes: input.resultHashes, feeShardIndex: input.feeShardIndex },
    input.programId,
  );
  // The escrows travel as remaining accounts, which the IDL does not list.
  for (const executionId of input.executionIds) {
    instruction.keys.push({ pubkey: escrowPda(executionId, input.programId), isSigner: false, isWritable: true });
  }
  return instruction;
}

/** What the agent's key signed for a batch: once over the batch digest, or (alone) one call's digest. */
export type BatchSignature =
  | { kind: "batch"; signature: Uint8Array }
  | { kind: "call"; signature: Uint8Array };

/**
 * `settle_batch` with its Ed25519 verification right before it. A batch signature is checked
 * over the batch digest of the escrows' result digests (`requestHashes` in the batch's order); a
 * call's own signature, over its result digest, settles a batch of one.
 */
export function settleBatchInstructions(
  input: SettleBatchInput & { signingKey: Uint8Array; requestHashes: Uint8Array[]; signed: BatchSignature },
): [TransactionInstruction, TransactionInstruction] {
  const digests = input.executionIds.map((executionId, i) =>
    resultDigest(executionId, input.agent, input.requestHashes[i]!, input.resultHashes[i]!),
  );
  if (input.signed.kind === "call" && digests.length !== 1) {
    throw new RangeError(`a call's own signature settles a batch of one, not ${digests.length}`);
  }
  const digest = input.signed.kind === "batch" ? batchDigest(input.agent, digests) : digests[0]!;
  return [ed25519VerifyInstruction(input.signingKey, input.signed.signature, digest), settleBatchInstruction(input)];
}

/**
 * The payer's dispute of an execution settled by `settle_batch`: its leaf's fields (from its
 * `EscrowSettledToLog` event), its `leafIndex` and the sibling hashes from the leaf up to a root
 * the agent's receipt log holds.
 */
export function openDisputeFromLogInstruction(input: {
  agent: PublicKey;
  leaf: ReceiptLeaf;
  leafIndex: bigint;
  proof: Uint8Array[];
  evidenceHash: Uint8Array;
} & ProgramOption): TransactionInstruction {
  const { executionId } = input.leaf;
  return buildInstruction(
    "open_dispute_from_log",
    {
      payer: input.leaf.payer,
      market: marketPda(input.programId),
      agent: input.agent,
      receiptLog: receiptLogPda(input.agent, input.programId),
      receipt: receiptPda(executionId, input.programId),
      dispute: disputePda(executionId, input.programId),
    },
    { leaf: input.leaf, leafIndex: input.leafIndex, proof: input.proof, evidenceHash: input.evidenceHash },
    input.programId,
  );
}
