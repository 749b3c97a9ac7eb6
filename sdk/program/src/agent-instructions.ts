// The builders of a creator's instructions on its agent: register_agent and update_agent (each
// with the Ed25519 proof of the signing key they need), collateral top-ups and withdrawals, retire_agent.
import { PublicKey, TransactionInstruction } from "@solana/web3.js";

import { signingKeyProofDigest } from "./digest.js";
import { ed25519VerifyInstruction } from "./ed25519-instruction.js";
import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { agentPda, collateralVaultPda, escrowVaultPda, marketPda, receiptLogPda } from "./pda.js";
import type { AgentTerms } from "./types.js";

export interface RegisterAgentInput extends ProgramOption {
  creator: PublicKey;
  agentId: Uint8Array;
  creatorTokenAccount: PublicKey;
  payoutAccount: PublicKey;
  /**
   * The payout account's owner (its token account `owner`), which the program reads to refuse
   * accounts of the program or the delegate; by default the creator.
   */
  payoutOwner?: PublicKey;
  usdcMint: PublicKey;
  terms: AgentTerms;
  collateralUsdc: bigint;
}

/** `register_agent` alone; it needs the signing-key proof right before it (see registerAgentInstructions). */
export function registerAgentInstruction(input: RegisterAgentInput): TransactionInstruction {
  const agent = agentPda(input.agentId, input.programId);
  return buildInstruction(
    "register_agent",
    {
      creator: input.creator,
      market: marketPda(input.programId),
      agent,
      collateralVault: collateralVaultPda(agent, input.programId),
      escrowVault: escrowVaultPda(agent, input.programId),
      creatorTokenAccount: input.creatorTokenAccount,
      payoutAccount: input.payoutAccount,
      payoutOwner: input.payoutOwner ?? input.creator,
      usdcMint: input.usdcMint,
    },
    { agentId: input.agentId, terms: input.terms, collateralUsdc: input.collateralUsdc },
    input.programId,
  );
}

/**
 * The Ed25519 verification of `signingKeyProof`, the signature of `signingKey` over
 * `signingKeyProofDigest(agent, creator)`: it must come right before `register_agent`, or an
 * `update_agent` that sets `signingKey`.
 */
export function signingKeyProofInstruction(input: {
  agent: PublicKey;
  creator: PublicKey;
  signingKey: Uint8Array;
  signingKeyProof: Uint8Array;
}): TransactionInstruction {
  return ed25519VerifyInstruction(
    input.signingKey,
    input.signingKeyProof,
    signingKeyProofDigest(input.agent, input.creator),
  );
}

/**
 * `[Ed25519 verification of the signing-key proof, register_agent, create_receipt_log]`, to be
 * sent in this order in one transaction. `signingKeyProof` is the signature of
 * `terms.signingKey` over `signingKeyProofDigest(agentPda(agentId), creator)`: the proof that the
 * creator holds the key. The creator also pays the agent's receipt log, which its settlements
 * append to (about 0.052 SOL of rent, held for the agent's life): the relayer lists only agents
 * that have one, so no agent costs the marketplace's SOL to exist.
 */
export function registerAgentInstructions(
  input: RegisterAgentInput & { signingKeyProof: Uint8Array },
): [TransactionInstruction, TransactionInstruction, TransactionInstruction] {
  const agent = agentPda(input.agentId, input.programId);
  return [
    signingKeyProofInstruction({
      agent,
      creator: input.creator,
      signingKey: input.terms.signingKey,
      signingKeyProof: input.signingKeyProof,
    }),
    registerAgentInstruction(input),
    createReceiptLogInstruction({ programId: input.programId, payer: input.creator, agent }),
  ];
}

/**
 * Creates `agent`'s receipt log; anyone may, and `payer` pays its rent once. Registration does it
 * (registerAgentInstructions); alone, it serves an agent registered without one.
 */
export function createReceiptLogInstruction(input: { payer: PublicKey; agent: PublicKey } & ProgramOption): TransactionInstruction {
  return buildInstruction(
    "create_receipt_log",
    { payer: input.payer, agent: input.agent, receiptLog: receiptLogPda(input.agent, input.programId) },
    {},
    input.programId,
  );
}

export interface UpdateAgentInput extends ProgramOption {
  creator: PublicKey;
  agent: PublicKey;
  payoutAccount: PublicKey;
  /** The payout account's owner; by default the creator (see RegisterAgentInput.payoutOwner). */
  payoutOwner?: PublicKey;
  terms: AgentTerms;
}

/** `update_agent` alone: enough when the terms keep the agent's signing key. */
export function updateAgentInstruction(input: UpdateAgentInput): TransactionInstruction {
  return buildInstruction(
    "update_agent",
    {
      creator: input.creator,
      market: marketPda(input.programId),
      agent: input.agent,
      payoutAccount: input.payoutAccount,
      payoutOwner: input.payoutOwner ?? input.creator,
    },
    { terms: input.terms },
    input.programId,
  );
}

/**
 * `update_agent`, preceded by the Ed25519 verification of `signingKeyProof` when one is given:
 * the program requires it when `terms.signingKey` differs from the agent's key, and only then.
 */
export function updateAgentInstructions(
  input: UpdateAgentInput & { signingKeyProof?: Uint8Array },
): TransactionInstruction[] {
  const update = updateAgentInstruction(input);
  if (!input.signingKeyProof) return [update];
  return [
    signingKeyProofInstruction({
      agent: input.agent,
      creator: input.creator,
      signingKey: input.terms.signingKey,
      signingKeyProof: input.signingKeyProof,
    }),
    update,
  ];
}

/** The accounts a collateral top-up and withdrawal share: the creator's account and the agent's vault. */
function collateralAccounts(input: { creator: PublicKey; agent: PublicKey; creatorTokenAccount: PublicKey; usdcMint: PublicKey } & ProgramOption) {
  return {
    creator: input.creator,
    market: marketPda(input.programId),
    agent: input.agent,
    collateralVault: collateralVaultPda(input.agent, input.programId),
    creatorTokenAccount: input.creatorTokenAccount,
    usdcMint: input.usdcMint,
  };
}

export function topUpCollateralInstruction(input: {
  creator: PublicKey;
  agent: PublicKey;
  creatorTokenAccount: PublicKey;
  usdcMint: PublicKey;
  amountUsdc: bigint;
} & ProgramOption): TransactionInstruction {
  return buildInstruction("top_up_collateral", collateralAccounts(input), { amountUsdc: input.amountUsdc }, input.programId);
}

export function retireAgentInstruction(input: { creator: PublicKey; agent: PublicKey } & ProgramOption): TransactionInstruction {
  return buildInstruction("retire_agent", { creator: input.creator, agent: input.agent }, {}, input.programId);
}

export function withdrawCollateralInstruction(input: {
  creator: PublicKey;
  agent: PublicKey;
  creatorTokenAccount: PublicKey;
  usdcMint: PublicKey;
} & ProgramOption): TransactionInstruction {
  return buildInstruction("withdraw_collateral", collateralAccounts(input), {}, input.programId);
}
