// Builders of settlement (docs/program.md, "Batched settlement"): the receipt log an agent's
// batches append to, and `settle_batch`, the one way an escrow is paid (a lone result is a batch
// of one).
import { type PublicKey, type TransactionInstruction } from "@solana/web3.js";

import { batchDigest, resultDigest, type EscrowBinding } from "./digest.js";
import { ed25519VerifyInstruction } from "./ed25519-instruction.js";
import { chargeOf, type ChargedEscrow } from "./metered-charge.js";
import { buildInstruction, type ProgramOption } from "./instruction-builder.js";
import { escrowPda, escrowVaultPda, feeShardPda, marketPda, receiptLogPda } from "./pda.js";

/** One escrow's entry of a `settle_batch`: the result hash and units its creator signed. */
export interface SettleItem {
  /** `outputHash(output)`. */
  resultHash: Uint8Array;
  /** Metered units the call used; 0 for a fixed-price call. */
  units: bigint;
}

export interface SettleBatchInput extends ProgramOption {
  relayer: PublicKey;
  usdcMint: PublicKey;
  agent: PublicKey;
  /** The agent's payout account (Agent.payoutAccount). */
  payoutAccount: PublicKey;
  /** The escrows to settle, all of `agent` and opened by `relayer`, in the order of `items`. */
  executionIds: Uint8Array[];
  /** Per escrow, the result hash and units its creator signed. */
  items: SettleItem[];
  feeShardIndex: number;
  /**
   * The payer token account of each metered escrow whose charge leaves something to return, in
   * the escrows' order (`returnAccounts`); none for a batch of fixed-price calls.
   */
  returnAccounts?: readonly PublicKey[];
}

/** An escrow as settlement reads it: without its pricing, a fixed-price escrow. */
export type SettledEscrow = EscrowBinding & Partial<Pick<ChargedEscrow, "pricePerUnitUsdc" | "maxUnits">>;

/**
 * The accounts a settlement returns the rest of metered escrows to: each escrow's payer token
 * account when its charge for its item's units leaves something, in order. Throws
 * UnitsAboveMaximumError for units the program would refuse.
 */
export function returnAccounts(escrows: readonly SettledEscrow[], items: readonly Pick<SettleItem, "units">[]): PublicKey[] {
  return escrows.flatMap((escrow, i) => {
    const charged = { amountUsdc: escrow.amountUsdc, pricePerUnitUsdc: escrow.pricePerUnitUsdc ?? 0n, maxUnits: escrow.maxUnits ?? 0n };
    return chargeOf(charged, items[i]!.units).returnedUsdc > 0n ? [escrow.payerTokenAccount] : [];
  });
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
    {
      resultHashes: input.items.map((item) => item.resultHash),
      // The program reads no units as all 0: a fixed-price batch leaves out 8 bytes an escrow.
      units: input.items.every((item) => item.units === 0n) ? [] : input.items.map((item) => item.units),
      feeShardIndex: input.feeShardIndex,
    },
    input.programId,
  );
  // The escrows, then the return accounts, travel as remaining accounts, which the IDL does not list.
  for (const executionId of input.executionIds) {
    instruction.keys.push({ pubkey: escrowPda(executionId, input.programId), isSigner: false, isWritable: true });
  }
  for (const pubkey of input.returnAccounts ?? []) instruction.keys.push({ pubkey, isSigner: false, isWritable: true });
  return instruction;
}

/** What the agent's key signed for a batch: once over the batch digest, or (alone) one call's digest. */
export type BatchSignature =
  | { kind: "batch"; signature: Uint8Array }
  | { kind: "call"; signature: Uint8Array };

/**
 * `settle_batch` with its Ed25519 verification right before it. Each escrow's v2 result digest is
 * computed here from `escrows` (the Escrow accounts, or what their opening recorded) and its item,
 * exactly as the program rebuilds it; a batch signature is checked over the batch digest of them
 * in order, a call's own signature over its result digest settles a batch of one. The return
 * accounts follow from the escrows' pricing and the items' units.
 */
export function settleBatchInstructions(
  input: Omit<SettleBatchInput, "executionIds" | "returnAccounts"> & {
    escrows: readonly SettledEscrow[];
    signingKey: Uint8Array;
    signed: BatchSignature;
  },
): [TransactionInstruction, TransactionInstruction] {
  const { escrows, items } = input;
  if (escrows.length !== items.length) {
    throw new RangeError(`settle_batch takes one item per escrow: ${escrows.length} escrows, ${items.length} items`);
  }
  const digests = escrows.map((escrow, i) => {
    if (!escrow.agent.equals(input.agent)) {
      throw new RangeError(`escrow ${i} is of agent ${escrow.agent.toBase58()}, not ${input.agent.toBase58()}`);
    }
    return resultDigest({ escrow, resultHash: items[i]!.resultHash, units: items[i]!.units });
  });
  if (input.signed.kind === "call" && digests.length !== 1) {
    throw new RangeError(`a call's own signature settles a batch of one, not ${digests.length}`);
  }
  const digest = input.signed.kind === "batch" ? batchDigest(input.agent, digests) : digests[0]!;
  const { escrows: _escrows, signingKey, signed, ...rest } = input;
  return [
    ed25519VerifyInstruction(signingKey, signed.signature, digest),
    settleBatchInstruction({
      ...rest,
      executionIds: escrows.map((escrow) => escrow.executionId),
      returnAccounts: returnAccounts(escrows, items),
    }),
  ];
}
