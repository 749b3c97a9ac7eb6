// The builders of disputes and receipts: open_dispute, resolve_dispute, close_receipt.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { collateralVaultPda, disputePda, marketPda, receiptPda } from "./pda.js";

export function openDisputeInstruction(input: {
  payer: PublicKey;
  agent: PublicKey;
  executionId: Uint8Array;
  evidenceHash: Uint8Array;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "open_dispute",
    {
      payer: input.payer,
      market: marketPda(input.programId),
      agent: input.agent,
      receipt: receiptPda(input.executionId, input.programId),
      dispute: disputePda(input.executionId, input.programId),
    },
    { evidenceHash: input.evidenceHash },
    input.programId,
  );
}

export function resolveDisputeInstruction(input: {
  arbiter: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  executionId: Uint8Array;
  payer: PublicKey;
  payerTokenAccount: PublicKey;
  upheld: boolean;
  slashUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "resolve_dispute",
    {
      arbiter: input.arbiter,
      market: marketPda(input.programId),
      agent: input.agent,
      dispute: disputePda(input.executionId, input.programId),
      payer: input.payer,
      payerTokenAccount: input.payerTokenAccount,
      collateralVault: collateralVaultPda(input.agent, input.programId),
      usdcMint: input.usdcMint,
    },
    { upheld: input.upheld, slashUsdc: input.slashUsdc },
    input.programId,
  );
}

/** Anyone may send it once the dispute window has passed: the rent goes back to `rentPayer`. */
export function closeReceiptInstruction(
  input: { executionId: Uint8Array; rentPayer: PublicKey } & ProgramOption,
): TransactionInstruction {
  return buildInstruction(
    "close_receipt",
    {
      market: marketPda(input.programId),
      receipt: receiptPda(input.executionId, input.programId),
      rentPayer: input.rentPayer,
    },
    {},
    input.programId,
  );
}
