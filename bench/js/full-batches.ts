// The fee floor of the batched design: how many executions the fullest transaction of each kind
// holds (built with the relayer's own instruction builders, in a v0 transaction loading the
// agent's fixed accounts from its lookup table, as the relayer sends them), and what a settled and
// a refunded execution would cost if every batch were that full. The measured figures of
// `bench:cost` sit above these; nothing the relayer does can go below them.
//
// One more row weighs the other settlement the issue allows: the creator's batch signature carried
// in the arguments for a later challenge instead of verified by the Ed25519 precompile (one charged
// signature fewer, the precompile instruction gone). The program has no such instruction; the row
// is the same settle_batch instruction with 64 bytes more of data, the size it would have.
import { randomBytes } from "node:crypto";

import {
  agentTableAddresses,
  fitsTransaction,
  MAX_OPEN_BATCH,
  openEscrowBatchInstruction,
  refundInstruction,
  settleBatchInstruction,
  settleBatchInstructions,
  withComputeBudget,
  type LookupTable,
} from "@agent-market/program";
import { REFUND_BATCH_SIZE, SETTLE_BATCH_SIZE } from "@agent-market/relayer";
import { Keypair, type PublicKey, type TransactionInstruction } from "@solana/web3.js";

/** Lamports Solana charges per signature, the precompile's included. */
const LAMPORTS_PER_SIGNATURE = 5_000;
/** Beyond any batch the program or a packet takes: the search stops here. */
const SEARCH_LIMIT = 64;

export interface FullBatch {
  kind: string;
  /** Executions the fullest transaction holds (packet size alone). */
  fits: number;
  /** The most the relayer puts in one transaction of the kind (the program's limit for opens), if it has a limit. */
  limit: number | null;
  /** Charged signatures of one such transaction. */
  signatures: number;
  fee_lamports_per_execution: number;
}

export interface FeeFloor {
  batches: FullBatch[];
  settled_lamports: number;
  refunded_lamports: number;
  /** Settled, were the batch signature carried for a challenge instead of verified. */
  settled_unverified_lamports: number;
}

const key = (): PublicKey => Keypair.generate().publicKey;

/**
 * The largest n ≤ SEARCH_LIMIT for which `build(n)` fits one transaction of `relayer`'s, after the
 * compute budget the relayer puts before it (its unit limit; no unit price, as on localnet).
 */
function fullest(relayer: PublicKey, programId: PublicKey, tables: LookupTable[], build: (n: number) => TransactionInstruction[]): number {
  let n = 0;
  while (n < SEARCH_LIMIT && fitsTransaction(relayer, withComputeBudget(build(n + 1), programId), tables)) n += 1;
  return n;
}

export function feeFloor(): FeeFloor {
  const programId = key();
  const relayer = key();
  const agent = key();
  const usdcMint = key();
  const payoutAccount = key();
  const tables: LookupTable[] = [{ key: key(), addresses: agentTableAddresses({ programId, agent, usdcMint, payoutAccount }) }];
  const onePayer = { payer: key(), payerTokenAccount: key() };
  const ids = (n: number) => Array.from({ length: n }, () => randomBytes(16));
  const hashes = (n: number) => Array.from({ length: n }, () => randomBytes(32));

  const opens = (n: number, payers: () => { payer: PublicKey; payerTokenAccount: PublicKey }) => [
    openEscrowBatchInstruction({
      programId,
      relayer,
      usdcMint,
      agent,
      items: ids(n).map((executionId) => ({ ...payers(), executionId, apiKeyId: randomBytes(16), requestHash: randomBytes(32), maxAmountUsdc: 10_000n })),
    }),
  ];
  const items = (n: number) => hashes(n).map((resultHash) => ({ resultHash, units: 0n }));
  const settleInput = (n: number) => ({ programId, relayer, usdcMint, agent, payoutAccount, executionIds: ids(n), items: items(n), feeShardIndex: 7 });
  const settles = (n: number) =>
    settleBatchInstructions({
      programId,
      relayer,
      usdcMint,
      agent,
      payoutAccount,
      escrows: ids(n).map((executionId, nonce) => ({ executionId, agent, nonce: BigInt(nonce), ...onePayer, amountUsdc: 10_000n, requestHash: randomBytes(32) })),
      items: items(n),
      feeShardIndex: 7,
      signingKey: randomBytes(32),
      signed: { kind: "batch", signature: randomBytes(64) },
    });
  const unverifiedSettles = (n: number) => {
    const instruction = settleBatchInstruction(settleInput(n));
    return [{ ...instruction, data: Buffer.concat([instruction.data, randomBytes(64)]) } as TransactionInstruction];
  };
  const refunds = (n: number) =>
    ids(n).map((executionId) =>
      refundInstruction({ programId, relayer, usdcMint, escrow: { executionId, agent, ...onePayer, rentPayer: relayer }, reason: "CreatorError", withSubscription: false }),
    );

  const row = (kind: string, fits: number, limit: number | null, signatures: number): FullBatch => {
    const batch = limit === null ? fits : Math.min(fits, limit);
    return { kind, fits, limit, signatures, fee_lamports_per_execution: Math.round((signatures * LAMPORTS_PER_SIGNATURE) / batch) };
  };
  const openOne = row("open_escrow_batch, one payer", fullest(relayer, programId, tables, (n) => opens(n, () => onePayer)), MAX_OPEN_BATCH, 1);
  const openMany = row("open_escrow_batch, a payer per call", fullest(relayer, programId, tables, (n) => opens(n, () => ({ payer: key(), payerTokenAccount: key() }))), MAX_OPEN_BATCH, 1);
  const settle = row("settle_batch, batch signature verified", fullest(relayer, programId, tables, settles), SETTLE_BATCH_SIZE, 2);
  const refund = row("refund instructions, one payer", fullest(relayer, programId, tables, refunds), REFUND_BATCH_SIZE, 1);
  const unverified = row("settle_batch, signature carried unverified (no such instruction)", fullest(relayer, programId, tables, unverifiedSettles), null, 1);
  return {
    batches: [openOne, openMany, settle, refund, unverified],
    settled_lamports: openOne.fee_lamports_per_execution + settle.fee_lamports_per_execution,
    refunded_lamports: openOne.fee_lamports_per_execution + refund.fee_lamports_per_execution,
    settled_unverified_lamports: openOne.fee_lamports_per_execution + unverified.fee_lamports_per_execution,
  };
}
