// The on-chain checks of a receipt, whose execution settle_batch settled (docs/program.md,
// "Batched settlement"): the batch carries this escrow with this result hash and units, the Ed25519
// precompile right before it verified the receipt's key over the batch digest that commits to
// this execution's digest (or over this digest itself, one signature per escrow), the execution's
// leaf in the batch's one EscrowsSettledToLog carries its escrow (nonce, payer, amount held) and
// its charge (charged, split, returned), the payout and fee moved the batch's totals, and, given
// the indexer, the leaf and its proof lead to a root the agent's receipt log holds on chain.
import {
  ED25519_PROGRAM_ID,
  IDL,
  batchDigest,
  coder,
  fetchLoggedReceipt,
  parseAddress,
  resultDigest,
  settledLeavesOfTransaction,
  toHex,
  verifyLoggedReceipt,
} from "@agent-market/program";
import type { Connection, Finality, PublicKey, VersionedTransactionResponse } from "@solana/web3.js";

import type { Execution, Receipt } from "./types.js";
import { Checks, same, tokenDelta, units } from "./verify-checks.js";

const SETTLE_BATCH = IDL.instructions.find((ix) => ix.name === "settle_batch")!;
/** The escrows follow the instruction's named accounts. */
export const SETTLE_BATCH_ESCROWS_AT = SETTLE_BATCH.accounts.length;
const ACCOUNT = (name: string): number => SETTLE_BATCH.accounts.findIndex((account) => account.name === name);
const AGENT_INDEX = ACCOUNT("agent");
const PAYOUT_INDEX = ACCOUNT("payout_account");
const FEE_SHARD_INDEX = ACCOUNT("fee_shard");
/** The precompile's entries read from its own instruction. */
const THIS_INSTRUCTION = 0xffff;

export interface BatchContext {
  execution: Execution;
  receipt: Receipt;
  tx: VersionedTransactionResponse;
  keys: PublicKey[];
  /** Index of the settle_batch instruction. */
  at: number;
  escrow: PublicKey;
  executionId: Uint8Array;
  /** The v2 result digest the receipt's fields rebuild to; null when they are malformed. */
  digest: Uint8Array | null;
  programId: PublicKey;
  connection: Connection;
  commitment: Finality;
  checks: Checks;
  options: { indexerUrl?: string };
}

/** The precompile's entry `i`: key, signature and message, all from its own data. */
function precompileEntry(data: Uint8Array, i: number): { key: string; signature: string; message: string } | null {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const at = 2 + 14 * i;
  const [signatureAt, signatureIx, keyAt, keyIx, messageAt, messageBytes, messageIx] = [0, 2, 4, 6, 8, 10, 12].map((offset) =>
    view.getUint16(at + offset, true),
  ) as [number, number, number, number, number, number, number];
  if (signatureIx !== THIS_INSTRUCTION || keyIx !== THIS_INSTRUCTION || messageIx !== THIS_INSTRUCTION) return null;
  return {
    key: toHex(data.subarray(keyAt, keyAt + 32)),
    signature: toHex(data.subarray(signatureAt, signatureAt + 64)),
    message: toHex(data.subarray(messageAt, messageAt + messageBytes)),
  };
}

export async function batchChecks(context: BatchContext): Promise<void> {
  const { receipt, tx, keys, at, escrow, checks } = context;
  const instructions = tx.transaction.message.compiledInstructions;
  const batch = instructions[at]!;
  const args = coder.instruction.decode(Buffer.from(batch.data))!.data as { result_hashes: number[][]; units: { toString(): string }[] };
  // One escrow a result hash; the payers' token accounts that metered settlements return to follow.
  const escrows = batch.accountKeyIndexes.slice(SETTLE_BATCH_ESCROWS_AT, SETTLE_BATCH_ESCROWS_AT + args.result_hashes.length).map((index) => keys[index]!);
  const position = escrows.findIndex((key) => key.equals(escrow));
  if (!checks.add(
    "settle_position",
    position >= 0,
    position >= 0 ? `escrow ${escrow.toBase58()} is ${position + 1} of ${escrows.length} in the settle_batch` : `escrow ${escrow.toBase58()} is not among the settle_batch's ${escrows.length} escrows`,
  )) {
    return;
  }
  checks.try("settle_arguments", () => {
    const agent = keys[batch.accountKeyIndexes[AGENT_INDEX]!]!.toBase58();
    if (agent !== receipt.agent) return [false, `settles agent ${agent}, the receipt names ${receipt.agent}`];
    const resultHash = args.result_hashes[position];
    if (!resultHash) return [false, `the batch has no result hash ${position}`];
    // No units counts at all stand for 0 for every escrow.
    const settledUnits = args.units.length === 0 ? "0" : args.units[position]?.toString();
    if (settledUnits === undefined) return [false, `the batch has no units count ${position}`];
    if (settledUnits !== receipt.units) return [false, `settled units ${settledUnits}, the receipt says ${receipt.units}`];
    return same("settled result hash", toHex(Uint8Array.from(resultHash)), receipt.result_hash);
  });

  // The batch's leaves, in its order: each carries what its result digest is rebuilt from.
  const logged = settledLeavesOfTransaction(context.tx, context.programId);
  const mine = logged.filter((leaf) => toHex(leaf.executionId) === toHex(context.executionId));

  checks.try("ed25519_instruction", () => {
    const previous = instructions[at - 1];
    if (!previous || !keys[previous.programIdIndex]?.equals(ED25519_PROGRAM_ID)) return [false, "settle_batch is not preceded by the Ed25519 precompile"];
    const key = parseAddress(receipt.creator_public_key);
    if (!key) return [false, `${receipt.creator_public_key} is not an Ed25519 public key`];
    const count = previous.data[0]!;
    // One signature per escrow (a batch of one may carry either form): this escrow's entry signs its digest.
    const own = count === escrows.length ? precompileEntry(previous.data, position) : null;
    if (context.digest === null) return [false, "the receipt's fields rebuild no digest to look for"];
    if (own !== null && own.message === toHex(context.digest)) {
      if (own.key !== toHex(key)) return [false, "the chain verified another key than the receipt's"];
      if (own.signature !== receipt.creator_signature) return [false, "the chain verified another signature than the receipt's"];
      return [true, `the chain verified the receipt's key, signature and digest, entry ${position} of ${count}`];
    }
    if (count !== 1) return [false, `the precompile verifies ${count} signatures for ${escrows.length} escrows, none over this receipt's digest`];
    const entry = precompileEntry(previous.data, 0);
    if (!entry) return [false, "the precompile reads from another instruction"];
    if (entry.key !== toHex(key)) return [false, "the chain verified another key than the receipt's"];
    if (logged.length !== escrows.length) return [false, `${logged.length} leaves in the batch's EscrowsSettledToLog for ${escrows.length} escrows`];
    const agent = keys[batch.accountKeyIndexes[AGENT_INDEX]!]!;
    // Each leaf carries its escrow's fields as the program read them: the digests it rebuilt.
    const digests = logged.map((leaf) => resultDigest({ escrow: { ...leaf, agent }, resultHash: leaf.resultHash, units: leaf.units }));
    if (toHex(digests[position]!) !== toHex(context.digest)) return [false, "the batch's digest of this escrow is not the receipt's"];
    if (entry.message !== toHex(batchDigest(agent, digests))) return [false, "the chain verified another message than the batch digest of these escrows"];
    return [true, `the chain verified the receipt's key over the batch digest of ${escrows.length} result digests, this receipt's among them`];
  });

  // The leaf's amount is what the escrow held; a metered call is charged only its units of it, the
  // split is of the charge, and the rest went back to the payer (a fixed price: all charged, 0 back).
  const { charge: answered } = context.execution;
  const charge = {
    held: answered.held_usdc === null ? null : units(answered.held_usdc),
    charged: units(answered.charged_usdc),
    returned: units(answered.returned_usdc),
    creatorShare: units(answered.creator_share_usdc),
    fee: units(answered.fee_usdc),
  };
  checks.try("escrow_settled_event", () => {
    if (mine.length !== 1) return [false, `${mine.length} leaves of this execution in the batch's EscrowsSettledToLog`];
    const leaf = mine[0]!;
    const problems: string[] = [];
    if (leaf.agent.toBase58() !== receipt.agent) problems.push(`agent ${leaf.agent.toBase58()}`);
    if (toHex(leaf.resultHash) !== receipt.result_hash) problems.push(`result hash ${toHex(leaf.resultHash)}`);
    if (toHex(leaf.requestHash) !== receipt.request_hash) problems.push(`request hash ${toHex(leaf.requestHash)}`);
    if (leaf.nonce.toString() !== receipt.escrow_nonce) problems.push(`nonce ${leaf.nonce}`);
    if (leaf.payer.toBase58() !== receipt.payer) problems.push(`payer ${leaf.payer.toBase58()}`);
    if (leaf.payerTokenAccount.toBase58() !== receipt.payer_token_account) problems.push(`payer token account ${leaf.payerTokenAccount.toBase58()}`);
    if (leaf.units.toString() !== receipt.units) problems.push(`units ${leaf.units}`);
    if (leaf.amountUsdc !== charge.held) problems.push(`held ${leaf.amountUsdc} ≠ ${charge.held}`);
    if (leaf.chargedUsdc !== charge.charged) problems.push(`charged ${leaf.chargedUsdc} ≠ ${charge.charged}`);
    if (leaf.returnedUsdc !== charge.returned) problems.push(`returned ${leaf.returnedUsdc} ≠ ${charge.returned}`);
    if (leaf.creatorShareUsdc !== charge.creatorShare) problems.push(`creator share ${leaf.creatorShareUsdc} ≠ ${charge.creatorShare}`);
    if (leaf.feeUsdc !== charge.fee) problems.push(`fee ${leaf.feeUsdc} ≠ ${charge.fee}`);
    return problems.length === 0
      ? [true, `settled to leaf ${leaf.leafIndex} of the receipt log: ${leaf.amountUsdc} base units held, ${leaf.chargedUsdc} charged (${leaf.creatorShareUsdc} to the creator, ${leaf.feeUsdc} fee), ${leaf.returnedUsdc} returned`]
      : [false, `the leaf differs from the receipt and charge: ${problems.join("; ")}`];
  });
  // One transfer each for the whole batch: what moved is the sum of its executions' shares.
  const total = (field: "creatorShareUsdc" | "feeUsdc") => logged.reduce((sum, leaf) => sum + leaf[field], 0n);
  checks.try("creator_payout", () => {
    const index = batch.accountKeyIndexes[PAYOUT_INDEX]!;
    const delta = tokenDelta(tx, index);
    return [delta === total("creatorShareUsdc"), `payout account ${keys[index]!.toBase58()} gained ${delta}, the batch's creator shares sum to ${total("creatorShareUsdc")}`];
  });
  checks.try("marketplace_fee", () => {
    const index = batch.accountKeyIndexes[FEE_SHARD_INDEX]!;
    const delta = tokenDelta(tx, index);
    return [delta === total("feeUsdc"), `fee shard ${keys[index]!.toBase58()} gained ${delta}, the batch's fees sum to ${total("feeUsdc")}`];
  });

  if (context.options.indexerUrl === undefined) return;
  try {
    const served = await fetchLoggedReceipt(context.options.indexerUrl, context.execution.id);
    if (!served) {
      checks.add("receipt_log", false, `the indexer has no receipt log leaf of ${context.execution.id}`);
      return;
    }
    const settled = mine[0];
    const leaf = served.receiptProof.leaf;
    if (!settled || leaf.executionId !== toHex(settled.executionId) || BigInt(leaf.nonce) !== settled.nonce || leaf.resultHash !== toHex(settled.resultHash) || BigInt(leaf.amountUsdc) !== settled.amountUsdc || BigInt(leaf.settledAt) !== settled.settledAt || served.agent !== receipt.agent) {
      checks.add("receipt_log", false, "the indexer's leaf differs from the settlement's EscrowsSettledToLog");
      return;
    }
    const check = await verifyLoggedReceipt(context.connection, served, { programId: context.programId, commitment: context.commitment });
    checks.add("receipt_log", check.ok, check.detail);
  } catch (error) {
    checks.add("receipt_log", false, error instanceof Error ? error.message : String(error));
  }
}
