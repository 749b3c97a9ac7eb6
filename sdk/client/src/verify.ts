// "@agent-market/client/verify": checks an execution's receipt without trusting the relayer.
//
// Offline: the receipt is about this execution, agent and output (result hash = SHA-256 of the
// output's canonical JSON; request hash = that of the task and parameters, when the caller
// passes them), its digest is the one the program rebuilds, and the creator's Ed25519 signature
// over it verifies. With a Connection, on-chain as well: the settlement transaction succeeded,
// carries the program's settle of this escrow with this result hash, right after the Ed25519
// verification of this very signature, emitted EscrowSettled with the execution's charge, moved
// exactly the creator's share to the payout account and the fee to a fee shard, and the agent
// account holds the receipt's signing key. An execution settled by settle_batch is checked
// against its batch instead (verify-batch.ts), and with an indexer URL its leaf and Merkle proof
// against the roots the agent's receipt log account holds.
//
// A separate entry because it needs @agent-market/program (anchor's coder, web3.js), which the
// main entry keeps out of browser bundles.
import {
  ED25519_PROGRAM_ID,
  IDL,
  coder,
  escrowPda,
  eventsFromInnerInstructions,
  fetchAgent,
  fromHex,
  ed25519Verify,
  outputHash,
  parseAddress,
  parseExecutionId,
  requestHash,
  resultDigest,
  toHex,
  type EventData,
} from "@agent-market/program";
import { PublicKey, type Connection, type Finality, type VersionedTransactionResponse } from "@solana/web3.js";

import type { Execution, Receipt } from "./types.js";
import { batchChecks, SETTLE_BATCH_ESCROWS_AT } from "./verify-batch.js";
import { Checks, same, tokenDelta, units, type ReceiptVerification } from "./verify-checks.js";

export type { ReceiptCheck, ReceiptVerification } from "./verify-checks.js";

/** The offline checks' options. */
interface OfflineOptions {
  /** What was sent: adds the request_hash check, which binds the receipt to the input. */
  request?: { task: string; parameters: Record<string, unknown> };
  /** A key the caller trusts (the listing's signing_key, say): adds a check that the receipt names it. */
  expectedSigningKey?: string;
}

/** The on-chain checks' options: a connection and the program id go together. */
export interface OnChainOptions {
  /** Adds the on-chain checks, read through this connection. */
  connection: Connection;
  /**
   * The program's address on the execution's network, from a source the caller trusts (its own
   * configuration; `networks[].program_id` of GET /v1/marketplace names it too). Required with
   * `connection`: the on-chain checks accept only this program's settle, events and agent account.
   */
  programId: PublicKey;
  /**
   * How settled the settlement must be (default "confirmed"). The API answers once it is
   * processed; until `transactions.confirmation` is "confirmed", the on-chain checks can fail.
   */
  commitment?: Finality;
  /**
   * The indexer's GraphQL URL of the execution's network. For an execution settled by
   * settle_batch (no receipt account), the on-chain checks then read its leaf and Merkle proof
   * there and check both against a root the agent's receipt log account holds.
   */
  indexerUrl?: string;
}

/** Offline checks alone, or with the on-chain ones (a connection and the program id, both). */
export type VerifyReceiptOptions = OfflineOptions & (OnChainOptions | { [K in keyof OnChainOptions]?: undefined });

const SETTLE = IDL.instructions.find((ix) => ix.name === "settle")!;
const SETTLE_ACCOUNT = (name: string): number => SETTLE.accounts.findIndex((account) => account.name === name);
const ESCROW_INDEX = SETTLE_ACCOUNT("escrow");
const AGENT_INDEX = SETTLE_ACCOUNT("agent");
const PAYOUT_INDEX = SETTLE_ACCOUNT("payout_account");
const FEE_SHARD_INDEX = SETTLE_ACCOUNT("fee_shard");

/** The one-signature layout of the Ed25519 precompile (see ed25519VerifyInstruction). */
const THIS_INSTRUCTION = 0xffff;

function offline(execution: Execution, receipt: Receipt, options: VerifyReceiptOptions, checks: Checks): Uint8Array | null {
  checks.try("execution_id", () => {
    if (!parseExecutionId(receipt.execution_id)) return [false, `${receipt.execution_id} is not an execution id`];
    return same("receipt for", receipt.execution_id, execution.id);
  });
  checks.try("agent", () => {
    if (!parseAddress(receipt.agent)) return [false, `${receipt.agent} is not an address`];
    return same("agent", receipt.agent, execution.agent);
  });
  checks.try("result_hash", () => same("SHA-256 of the output's canonical JSON:", toHex(outputHash(execution.output)), receipt.result_hash));
  if (options.request) {
    const { task, parameters } = options.request;
    checks.try("request_hash", () => same("SHA-256 of the task and parameters:", toHex(requestHash(task, parameters)), receipt.request_hash));
  }
  let digest: Uint8Array | null = null;
  checks.try("digest", () => {
    const executionId = parseExecutionId(receipt.execution_id);
    const agent = parseAddress(receipt.agent);
    if (!executionId || !agent) return [false, "cannot be rebuilt without a valid execution id and agent"];
    digest = resultDigest(executionId, new PublicKey(agent), fromHex(receipt.request_hash), fromHex(receipt.result_hash));
    return same("rebuilt digest", toHex(digest), receipt.digest);
  });
  checks.try("creator_signature", () => {
    const key = parseAddress(receipt.creator_public_key);
    if (!key) return [false, `${receipt.creator_public_key} is not an Ed25519 public key`];
    if (!digest) return [false, "no digest to verify"];
    return ed25519Verify(fromHex(receipt.creator_signature), digest, key)
      ? [true, `Ed25519 signature by ${receipt.creator_public_key} over the digest verifies`]
      : [false, `the signature does not verify against ${receipt.creator_public_key}`];
  });
  if (options.expectedSigningKey !== undefined) {
    checks.try("expected_signing_key", () => same("signed by", receipt.creator_public_key, options.expectedSigningKey!));
  }
  return digest;
}

async function onChain(
  execution: Execution,
  receipt: Receipt,
  digest: Uint8Array | null,
  connection: Connection,
  commitment: Finality,
  programId: PublicKey,
  checks: Checks,
  options: VerifyReceiptOptions,
): Promise<void> {
  const signature = execution.transactions.settlement;
  if (!signature) {
    checks.add("settlement_transaction", false, "the execution names no settlement transaction");
    return;
  }
  let tx: VersionedTransactionResponse | null;
  try {
    tx = await connection.getTransaction(signature, { commitment, maxSupportedTransactionVersion: 0 });
  } catch (error) {
    checks.add("settlement_transaction", false, `the RPC failed: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  if (!tx?.meta) {
    checks.add("settlement_transaction", false, `${signature} is not ${commitment} (yet?)`);
    return;
  }
  if (!checks.add(
    "settlement_transaction",
    tx.meta.err === null,
    tx.meta.err === null ? `${signature} succeeded in slot ${tx.slot}` : `${signature} failed: ${JSON.stringify(tx.meta.err)}`,
  )) {
    return;
  }
  const message = tx.transaction.message;
  const loaded = tx.meta.loadedAddresses;
  const keys = [...message.staticAccountKeys, ...(loaded?.writable ?? []), ...(loaded?.readonly ?? [])];
  const instructions = message.compiledInstructions;
  const executionId = parseExecutionId(receipt.execution_id);
  const escrow = executionId ? escrowPda(executionId, programId) : null;

  const settleAt = instructions.findIndex((ix) => {
    if (!keys[ix.programIdIndex]?.equals(programId)) return false;
    const decoded = coder.instruction.decode(Buffer.from(ix.data));
    return decoded?.name === "settle" && escrow !== null && keys[ix.accountKeyIndexes[ESCROW_INDEX]!]?.equals(escrow) === true;
  });
  const settle = instructions[settleAt];
  if (settle === undefined && escrow !== null) {
    // Settled by settle_batch: the escrow is among its remaining accounts.
    const batchAt = instructions.findIndex(
      (ix) =>
        keys[ix.programIdIndex]?.equals(programId) === true &&
        coder.instruction.decode(Buffer.from(ix.data))?.name === "settle_batch" &&
        ix.accountKeyIndexes.slice(SETTLE_BATCH_ESCROWS_AT).some((index) => keys[index]?.equals(escrow) === true),
    );
    if (batchAt >= 0) {
      await batchChecks({ execution, receipt, tx, keys, at: batchAt, escrow, executionId: executionId!, programId, connection, commitment, checks, options });
      await signingKeyCheck(receipt, connection, commitment, programId, checks);
      return;
    }
  }
  if (!checks.add(
    "settle_instruction",
    settle !== undefined,
    settle ? `instruction ${settleAt} settles escrow ${escrow!.toBase58()}` : "no settle of this execution's escrow in the transaction",
  )) {
    return;
  }
  checks.try("settle_arguments", () => {
    const args = coder.instruction.decode(Buffer.from(settle!.data))!.data as { result_hash: number[] };
    const agent = keys[settle!.accountKeyIndexes[AGENT_INDEX]!]!.toBase58();
    if (agent !== receipt.agent) return [false, `settles agent ${agent}, the receipt names ${receipt.agent}`];
    return same("settled result hash", toHex(Uint8Array.from(args.result_hash)), receipt.result_hash);
  });

  checks.try("ed25519_instruction", () => {
    const previous = instructions[settleAt - 1];
    if (!previous || !keys[previous.programIdIndex]?.equals(ED25519_PROGRAM_ID)) {
      return [false, "settle is not preceded by the Ed25519 precompile"];
    }
    const data = previous.data;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (data[0] !== 1) return [false, `the precompile verifies ${data[0]} signatures, not 1`];
    const [signatureAt, signatureIx, keyAt, keyIx, messageAt, messageBytes, messageIx] = [2, 4, 6, 8, 10, 12, 14].map((at) =>
      view.getUint16(at, true),
    ) as [number, number, number, number, number, number, number];
    if (signatureIx !== THIS_INSTRUCTION || keyIx !== THIS_INSTRUCTION || messageIx !== THIS_INSTRUCTION) {
      return [false, "the precompile reads from another instruction"];
    }
    const verifiedKey = toHex(data.subarray(keyAt, keyAt + 32));
    const verifiedSignature = toHex(data.subarray(signatureAt, signatureAt + 64));
    const verifiedMessage = toHex(data.subarray(messageAt, messageAt + messageBytes));
    const key = parseAddress(receipt.creator_public_key);
    if (!key || verifiedKey !== toHex(key)) return [false, "the chain verified another key than the receipt's"];
    if (verifiedSignature !== receipt.creator_signature) return [false, "the chain verified another signature than the receipt's"];
    if (!digest || verifiedMessage !== toHex(digest)) return [false, "the chain verified another digest than the receipt's"];
    return [true, "the chain verified the receipt's key, signature and digest"];
  });

  const charge = {
    amount: units(execution.charge.amount_usdc),
    creatorShare: units(execution.charge.creator_share_usdc),
    fee: units(execution.charge.fee_usdc),
  };
  checks.try("escrow_settled_event", () => {
    const events = eventsFromInnerInstructions(tx!, programId).filter(
      (event): event is { name: "EscrowSettled"; data: EventData<"EscrowSettled"> } =>
        event.name === "EscrowSettled" && executionId !== null && toHex(event.data.executionId) === toHex(executionId),
    );
    if (events.length !== 1) return [false, `${events.length} EscrowSettled events for this execution`];
    const event = events[0]!.data;
    const problems: string[] = [];
    if (event.agent.toBase58() !== receipt.agent) problems.push(`agent ${event.agent.toBase58()}`);
    if (toHex(event.resultHash) !== receipt.result_hash) problems.push(`result hash ${toHex(event.resultHash)}`);
    if (event.amountUsdc !== charge.amount) problems.push(`amount ${event.amountUsdc} ≠ ${charge.amount}`);
    if (event.creatorShareUsdc !== charge.creatorShare) problems.push(`creator share ${event.creatorShareUsdc} ≠ ${charge.creatorShare}`);
    if (event.feeUsdc !== charge.fee) problems.push(`fee ${event.feeUsdc} ≠ ${charge.fee}`);
    return problems.length === 0
      ? [true, `settled ${event.amountUsdc} base units: ${event.creatorShareUsdc} to the creator, ${event.feeUsdc} fee`]
      : [false, `the event differs from the receipt and charge: ${problems.join("; ")}`];
  });
  checks.try("creator_payout", () => {
    const index = settle.accountKeyIndexes[PAYOUT_INDEX]!;
    const delta = tokenDelta(tx!, index);
    return [delta === charge.creatorShare, `payout account ${keys[index]!.toBase58()} gained ${delta}, the charge says ${charge.creatorShare}`];
  });
  checks.try("marketplace_fee", () => {
    const index = settle.accountKeyIndexes[FEE_SHARD_INDEX]!;
    const delta = tokenDelta(tx!, index);
    return [delta === charge.fee, `fee shard ${keys[index]!.toBase58()} gained ${delta}, the charge says ${charge.fee}`];
  });

  await signingKeyCheck(receipt, connection, commitment, programId, checks);
}

/** The agent account on chain holds the key that signed the receipt. */
async function signingKeyCheck(receipt: Receipt, connection: Connection, commitment: Finality, programId: PublicKey, checks: Checks): Promise<void> {
  try {
    const agent = await fetchAgent(connection, new PublicKey(receipt.agent), { commitment, programId });
    const key = agent ? new PublicKey(agent.signingKey).toBase58() : null;
    checks.add(
      "on_chain_signing_key",
      key === receipt.creator_public_key,
      key === null ? `no agent account ${receipt.agent}` : `the agent account's signing key is ${key}`,
    );
  } catch (error) {
    checks.add("on_chain_signing_key", false, error instanceof Error ? error.message : String(error));
  }
}

/**
 * Checks `execution`'s receipt: offline always, on-chain too with `options.connection`. Never
 * throws for a bad receipt: every check is reported, and `ok` is whether all passed.
 */
export async function verifyReceipt(execution: Execution, options: VerifyReceiptOptions = {}): Promise<ReceiptVerification> {
  const checks = new Checks();
  const receipt = execution.receipt;
  if (!checks.add(
    "receipt",
    execution.status === "succeeded" && receipt !== null,
    receipt ? `execution ${execution.id} is ${execution.status}` : `execution ${execution.id} is ${execution.status}, without a receipt`,
  )) {
    return checks.result();
  }
  const digest = offline(execution, receipt!, options, checks);
  if (options.connection) {
    try {
      const commitment = options.commitment ?? "confirmed";
      await onChain(execution, receipt!, digest, options.connection, commitment, options.programId, checks, options);
    } catch (error) {
      // Each check catches its own failures; this is a transaction of a shape none expected.
      checks.add("on_chain", false, error instanceof Error ? error.message : String(error));
    }
  }
  return checks.result();
}
