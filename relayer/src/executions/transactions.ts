// What the execution's transactions share: the sender of each network, the escrow an execution's
// settle_batch or refund closes, and how to read a refusal (the program's error, or the relayer's SOL).
import {
  errorFromCode,
  FEE_SHARD_COUNT,
  fitsTransaction,
  openEscrowBatchInstruction,
  openEscrowInstruction,
  refundInstruction,
  settleBatchInstructions,
  type BatchSignature,
  type ChargedEscrow,
  type EscrowBinding,
  type LookupTable,
  type OpenBatchItem,
  type RefundReason,
  type NetworkName,
} from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { LookupTables } from "../chain/lookup-tables.js";
import type { SignedTransaction, TransactionSender } from "../chain/tx-sender.js";
import type { KeyedBatcherOptions } from "../db/batcher.js";
import { ApiError } from "../errors.js";
import type { AgentActivity } from "./agent-activity.js";
import { executionIdBytes, keyIdBytes, type ExecutionRow } from "./execution-row.js";

const bs58 = utils.bytes.bs58;

export type Senders = Partial<Record<NetworkName, TransactionSender>>;

/** How an agent's batches of one kind (opens, settlements, refunds) are made. */
export interface BatchOptions {
  /** The agents' lookup tables, when batches are v0 transactions loading from them. */
  tables?: LookupTables;
  /** See BatcherOptions.gather_ms. */
  gather_ms?: number;
  /** The agents' executions in progress here, which decide whether gathering pays. */
  activity?: AgentActivity;
}

/** The batchers' options for one kind of batch of at most `max_batch`, one batch of an agent in flight at a time. */
export function batcherOptions(max_batch: number, options: BatchOptions): KeyedBatcherOptions {
  const { activity } = options;
  return {
    max_batch,
    max_in_flight: 1,
    gather_ms: options.gather_ms ?? 0,
    ...(activity ? { gather_if: (key: string) => activity.busy(key) } : {}),
  };
}

/**
 * A sent transaction not seen after this long is sent again (the same bytes: it lands at most
 * once): a few slots, about what an RPC node itself waits before it rebroadcasts.
 */
export const REBROADCAST_MS = 1_000;

export function senderOf(senders: Senders, network: NetworkName): TransactionSender {
  const sender = senders[network];
  if (!sender) throw new ApiError("network_not_configured", `This relayer does not serve ${network}.`, undefined, { network });
  return sender;
}

/** What an execution's open names: a row, or the execution about to be inserted as one. */
export type OpeningExecution = Pick<ExecutionRow, "id" | "network" | "agent" | "wallet" | "payer_token_account" | "api_key_id" | "request_hash" | "quoted_usdc">;

/**
 * The one place escrows are opened from: open_escrow for one execution (the same bytes whether
 * the request, the run job or a batch of one builds it), open_escrow_batch for several of one
 * agent. Each escrow is limited to its execution's quote: the program charges no more, so a price
 * raised since the quote is refused on chain, never taken.
 */
export async function openEscrowInstructions(
  chain: ChainService,
  sender: TransactionSender,
  executions: OpeningExecution[],
): Promise<TransactionInstruction[]> {
  const { network, agent } = executions[0]!;
  const market = await chain.market(network);
  const common = {
    programId: chain.programId(network),
    relayer: sender.signer.publicKey,
    usdcMint: market.usdcMint,
    agent: new PublicKey(agent),
  };
  const items = executions.map(openItemOf);
  if (items.length === 1) return [openEscrowInstruction({ ...common, ...items[0]! })];
  return [openEscrowBatchInstruction({ ...common, items })];
}

/** An execution's escrow as open_escrow (or an item of open_escrow_batch) takes it: at most its quote. */
function openItemOf(row: OpeningExecution): OpenBatchItem {
  return {
    payer: new PublicKey(row.wallet),
    payerTokenAccount: new PublicKey(row.payer_token_account),
    executionId: executionIdBytes(row.id),
    apiKeyId: keyIdBytes(row.api_key_id),
    requestHash: row.request_hash,
    maxAmountUsdc: BigInt(row.quoted_usdc),
  };
}

/** The escrow accounts of an execution, as refund names them. */
export function escrowRef(row: ExecutionRow, sender: TransactionSender) {
  return {
    executionId: executionIdBytes(row.id),
    agent: new PublicKey(row.agent),
    payer: new PublicKey(row.wallet),
    payerTokenAccount: new PublicKey(row.payer_token_account),
    rentPayer: sender.signer.publicKey,
  };
}

/**
 * What the execution's escrow recorded at its open (its row holds it once the escrow was read),
 * with its pricing: a row without it is of a fixed-price escrow.
 */
export function escrowBinding(row: ExecutionRow): EscrowBinding & ChargedEscrow {
  return {
    pricePerUnitUsdc: BigInt(row.price_per_unit_usdc ?? "0"),
    maxUnits: BigInt(row.max_units ?? "0"),
    executionId: executionIdBytes(row.id),
    agent: new PublicKey(row.agent),
    nonce: BigInt(row.escrow_nonce!),
    payer: new PublicKey(row.wallet),
    payerTokenAccount: new PublicKey(row.payer_token_account),
    amountUsdc: BigInt(row.amount_usdc!),
    requestHash: row.request_hash,
  };
}

/** A verified result of one execution, as settle_batch takes it. */
export interface Settlement {
  /** The row with its escrow's facts (nonce, amount). */
  row: ExecutionRow;
  result_hash: Uint8Array;
  /** u64 as a decimal string, as the row keeps it. */
  units: string;
}

/**
 * settle_batch of one agent's `settlements`, in order, with the Ed25519 verification of `signed`
 * right before it: the program rebuilds each v2 digest from the escrow and its item.
 */
export function settleInstructionsOf(
  settlements: readonly Settlement[],
  target: { programId: PublicKey; usdcMint: PublicKey; payoutAccount: PublicKey; signingKey: Uint8Array },
  sender: TransactionSender,
  signed: BatchSignature,
  fee_shard: number,
) {
  return settleBatchInstructions({
    programId: target.programId,
    relayer: sender.signer.publicKey,
    usdcMint: target.usdcMint,
    agent: new PublicKey(settlements[0]!.row.agent),
    payoutAccount: target.payoutAccount,
    escrows: settlements.map(({ row }) => escrowBinding(row)),
    items: settlements.map(({ result_hash, units }) => ({ resultHash: result_hash, units: BigInt(units) })),
    feeShardIndex: fee_shard,
    signingKey: target.signingKey,
    signed,
  });
}

/**
 * The settlement of a recorded result, signed anew (its first signature expired unlanded): a
 * batch of one under its call's own signature, since the batch it was part of is gone with its
 * blockhash, and its batch signature covered the others too.
 */
export function resignSettle(row: ExecutionRow, usdcMint: PublicKey, sender: TransactionSender, programId: PublicKey) {
  return settleInstructionsOf(
    [{ row, result_hash: row.result_hash!, units: row.units! }],
    { programId, usdcMint, payoutAccount: new PublicKey(row.payout_account!), signingKey: bs58.decode(row.signing_key!) },
    sender,
    { kind: "call", signature: row.creator_signature! },
    row.fee_shard!,
  );
}

/** The refund of the execution's escrow, as one instruction (a batch of refunds carries several). */
export function refundOf(row: ExecutionRow, reason: RefundReason, usdcMint: PublicKey, sender: TransactionSender, programId: PublicKey): TransactionInstruction {
  return refundInstruction({
    programId,
    relayer: sender.signer.publicKey,
    usdcMint,
    escrow: escrowRef(row, sender),
    reason,
    withSubscription: row.used_subscription,
  });
}

/** A refund of the execution's escrow, signed with a fresh blockhash. */
export async function signRefund(chain: ChainService, senders: Senders, row: ExecutionRow, reason: RefundReason): Promise<SignedTransaction> {
  const sender = senderOf(senders, row.network);
  const market = await chain.market(row.network);
  return sender.sign([refundOf(row, reason, market.usdcMint, sender, chain.programId(row.network))]);
}

/**
 * `items` in as few transactions as they fit in: whole if one transaction of `instructions`, with
 * the compute budget `sender` adds, paid and signed by it alone (v0 loading from `tables` when
 * there are any), holds them, else the longest leading run that fits (found by halving: a run
 * that fits fits shorter), then the rest split the same way.
 */
export async function fittingChunks<T>(
  items: T[],
  sender: TransactionSender,
  instructions: (chunk: T[]) => Promise<TransactionInstruction[]> | TransactionInstruction[],
  tables: readonly LookupTable[] = [],
): Promise<T[][]> {
  const fits = async (count: number) =>
    fitsTransaction(sender.signer.publicKey, sender.budgeted(await instructions(items.slice(0, count))), tables);
  if (items.length === 1 || (await fits(items.length))) return [items];
  let count = 1;
  let over = items.length;
  while (over - count > 1) {
    const middle = Math.floor((count + over) / 2);
    if (await fits(middle)) count = middle;
    else over = middle;
  }
  return [items.slice(0, count), ...(await fittingChunks(items.slice(count), sender, instructions, tables))];
}

/**
 * A fee shard for the next fee: any will do, as long as concurrent settlements spread over them
 * (one token account each, so their transactions do not lock the same account).
 */
export function anyFeeShard(): number {
  return Math.floor(Math.random() * FEE_SHARD_COUNT);
}

/**
 * A transaction refused because the relayer, its fee payer and the payer of the rent of the
 * accounts it opens, has too little SOL: for the fee (or no account at all), for its own rent
 * exemption, or for the rent of a new account (the system program's "insufficient lamports").
 */
export function feePayerShort(sent: { err: unknown; logs: string[] }): boolean {
  const err = JSON.stringify(sent.err ?? null);
  return (
    /InsufficientFundsForFee|InsufficientFundsForRent|"AccountNotFound"/.test(err) ||
    sent.logs.some((line) => /insufficient lamports/i.test(line))
  );
}

/** The program error named in a failed simulation's message ("custom program error: 0x1771"). */
export function errorFromLogs(message: string): string | null {
  const match = /custom program error: (0x[0-9a-f]+)/i.exec(message);
  return match ? (errorFromCode(Number(match[1]))?.name ?? null) : null;
}
