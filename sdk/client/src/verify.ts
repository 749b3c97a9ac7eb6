// "@agent-market/client/verify": checks an execution's receipt without trusting the relayer.
//
// Offline: the receipt is about this execution, agent and output (result hash = SHA-256 of the
// output's canonical JSON; request hash = that of the task and parameters, when the caller
// passes them), its digest is the execute protocol v2 digest the program rebuilds from the escrow
// the receipt names (nonce, payer, payer token account, amount) and its units, and the creator's
// Ed25519 signature over it verifies. With a Connection, on-chain as well: the settlement
// transaction succeeded and its settle_batch settled this escrow as the receipt says
// (verify-batch.ts), the agent account holds the receipt's signing key, and with an indexer URL
// the leaf and its Merkle proof lead to a root the agent's receipt log account holds.
//
// A separate entry because it needs @agent-market/program (anchor's coder, web3.js), which the
// main entry keeps out of browser bundles.
import {
  EXECUTE_PROTOCOL_VERSION,
  coder,
  ed25519Verify,
  escrowBindingOf,
  escrowPda,
  fetchAgent,
  fromHex,
  outputHash,
  parseAddress,
  parseDecimalU64,
  parseExecutionId,
  requestHash,
  resultDigest,
  toHex,
} from "@agent-market/program";
import { PublicKey, type Connection, type Finality, type VersionedTransactionResponse } from "@solana/web3.js";

import type { Execution, Receipt } from "./types.js";
import { batchChecks, SETTLE_BATCH_ESCROWS_AT } from "./verify-batch.js";
import { Checks, same, type ReceiptVerification } from "./verify-checks.js";

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
  checks.try("protocol_version", () => [
    receipt.protocol_version === EXECUTE_PROTOCOL_VERSION,
    `execute protocol version ${String(receipt.protocol_version)}${receipt.protocol_version === EXECUTE_PROTOCOL_VERSION ? "" : `, this client checks ${EXECUTE_PROTOCOL_VERSION}`}`,
  ]);
  let digest: Uint8Array | null = null;
  checks.try("digest", () => {
    let escrow;
    try {
      escrow = escrowBindingOf(receipt);
    } catch (error) {
      return [false, `cannot be rebuilt: ${(error as Error).message}`];
    }
    const units = parseDecimalU64(receipt.units);
    if (units === null) return [false, `cannot be rebuilt: units is not the decimal string of a u64: ${String(receipt.units)}`];
    if (!/^[0-9a-f]{64}$/.test(receipt.result_hash)) return [false, "cannot be rebuilt: result_hash is not 64 lowercase hex characters"];
    digest = resultDigest({ escrow, resultHash: fromHex(receipt.result_hash), units });
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

  const batchAt =
    escrow === null
      ? -1
      : instructions.findIndex(
          (ix) =>
            keys[ix.programIdIndex]?.equals(programId) === true &&
            coder.instruction.decode(Buffer.from(ix.data))?.name === "settle_batch" &&
            ix.accountKeyIndexes.slice(SETTLE_BATCH_ESCROWS_AT).some((index) => keys[index]?.equals(escrow) === true),
        );
  if (!checks.add(
    "settle_instruction",
    batchAt >= 0,
    batchAt >= 0 ? `instruction ${batchAt} settles escrow ${escrow!.toBase58()}` : "no settle_batch of this execution's escrow in the transaction",
  )) {
    return;
  }
  await batchChecks({ execution, receipt, tx, keys, at: batchAt, escrow: escrow!, executionId: executionId!, digest, programId, connection, commitment, checks, options });
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
