// The builders of a payer's dispute of one leaf of an agent's receipt log: open_dispute,
// resolve_dispute and close_dispute. A dispute is keyed by (agent, leaf index), never by the
// execution id, which may have been settled more than once.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { collateralVaultPda, disputePda, marketPda, receiptLogPda } from "./pda.js";
import type { ReceiptLeaf } from "./types.js";

/**
 * The payer's dispute of a settled execution: its leaf's fields (from its batch's `EscrowsSettledToLog`
 * event), its `leafIndex` and the sibling hashes from the leaf up to a root the agent's receipt
 * log holds. The leaf's payer signs and pays the dispute's rent; the argument leaves the payer out
 * (the program takes the signer for it), which is what fits the dispute in one transaction.
 */
export function openDisputeInstruction(input: {
  agent: PublicKey;
  leaf: ReceiptLeaf;
  leafIndex: bigint;
  proof: Uint8Array[];
  evidenceHash: Uint8Array;
} & ProgramOption): TransactionInstruction {
  const { payer, ...disputed } = input.leaf;
  return buildInstruction(
    "open_dispute",
    {
      payer,
      market: marketPda(input.programId),
      agent: input.agent,
      receiptLog: receiptLogPda(input.agent, input.programId),
      dispute: disputePda(input.agent, input.leafIndex, input.programId),
    },
    { leaf: disputed, leafIndex: input.leafIndex, proof: input.proof, evidenceHash: input.evidenceHash },
    input.programId,
  );
}

/**
 * The arbiter's ruling; the dispute stays, resolved, until `closeDisputeInstruction`. Upheld, up
 * to `slashUsdc` of the agent's collateral goes to `payerTokenAccount` (Dispute.payerTokenAccount).
 */
export function resolveDisputeInstruction(input: {
  arbiter: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  leafIndex: bigint;
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
      dispute: disputePda(input.agent, input.leafIndex, input.programId),
      payerTokenAccount: input.payerTokenAccount,
      collateralVault: collateralVaultPda(input.agent, input.programId),
      usdcMint: input.usdcMint,
    },
    { upheld: input.upheld, slashUsdc: input.slashUsdc },
    input.programId,
  );
}

/**
 * Anyone may send it once the dispute is resolved and its leaf's dispute window has passed: the
 * rent goes back to `payer` (Dispute.payer).
 */
export function closeDisputeInstruction(
  input: { agent: PublicKey; leafIndex: bigint; payer: PublicKey } & ProgramOption,
): TransactionInstruction {
  return buildInstruction(
    "close_dispute",
    {
      market: marketPda(input.programId),
      dispute: disputePda(input.agent, input.leafIndex, input.programId),
      payer: input.payer,
    },
    {},
    input.programId,
  );
}
