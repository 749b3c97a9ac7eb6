// Builder of `open_escrow_batch` (docs/program.md, "Batched opens"): several escrows of one agent
// opened in one instruction, each under `open_escrow`'s rules.
import { type PublicKey, type TransactionInstruction } from "@solana/web3.js";

import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { delegatePda, escrowPda, escrowVaultPda, marketPda, subscriptionPda } from "./pda.js";

/** One escrow of a batched open: who pays, and `open_escrow`'s arguments. */
export interface OpenBatchItem {
  /** Owner of `payerTokenAccount`, whose subscription to the agent the call may use. */
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  executionId: Uint8Array;
  apiKeyId: Uint8Array;
  requestHash: Uint8Array;
  /** The quote the payer accepted: the call is refused if it costs more. */
  maxAmountUsdc: bigint;
}

export interface OpenEscrowBatchInput extends ProgramOption {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  /** At most MAX_OPEN_BATCH items, all of `agent`, with distinct execution ids. */
  items: OpenBatchItem[];
}

export function openEscrowBatchInstruction(input: OpenEscrowBatchInput): TransactionInstruction {
  const instruction = buildInstruction(
    "open_escrow_batch",
    {
      relayer: input.relayer,
      market: marketPda(input.programId),
      agent: input.agent,
      escrowVault: escrowVaultPda(input.agent, input.programId),
      delegate: delegatePda(input.programId),
      usdcMint: input.usdcMint,
    },
    {
      items: input.items.map((item) => ({
        executionId: item.executionId,
        apiKeyId: item.apiKeyId,
        requestHash: item.requestHash,
        maxAmountUsdc: item.maxAmountUsdc,
      })),
    },
    input.programId,
  );
  // Each item's escrow, token account and subscription travel as remaining accounts, which the
  // IDL does not list; the subscription goes at its address whether or not it exists.
  for (const item of input.items) {
    instruction.keys.push(
      { pubkey: escrowPda(item.executionId, input.programId), isSigner: false, isWritable: true },
      { pubkey: item.payerTokenAccount, isSigner: false, isWritable: true },
      { pubkey: subscriptionPda(input.agent, item.payer, input.programId), isSigner: false, isWritable: true },
    );
  }
  return instruction;
}
