// Closing receipts once their dispute window has passed (executions settled into their agent's
// receipt log have none: a leaf holds no rent). settle makes the relayer pay each
// receipt's rent (0.00235 SOL); close_receipt hands it back. Left open, every settled execution
// would keep that much of the relayer's SOL for good, until it could no longer open escrows.
//
// The chain decides, not the database: every round reads the candidate receipts and the clock
// sysvar, closes only those whose window has passed on chain, and marks closed those the chain no
// longer holds (close_receipt is open to anyone, so someone else may have been first). A close
// transaction is recorded before it is sent; until its blockhash expires no second one is sent for
// the same receipt, so two rounds never pay twice for one close.
//
// close_receipt does not look at disputes, but a receipt whose dispute is still open is part of
// what the arbiter weighs: it stays until the dispute is resolved. Such receipts are read again
// after the others, so that open disputes never hold up the rest.
import { closeReceiptInstruction, decodeReceipt, disputePda, receiptPda, type NetworkName } from "@agent-market/program";
import { SYSVAR_CLOCK_PUBKEY, type PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { Db } from "../db/database.js";
import { executionIdBytes } from "./execution-row.js";
import type { ExecutionStore } from "./execution-store.js";

/**
 * close_receipt instructions in one transaction: each adds its receipt's address and a 16-byte
 * instruction to a legacy message that must stay within 1,232 bytes (receipt-closer.test.ts).
 */
export const RECEIPTS_PER_TRANSACTION = 20;
/** Receipts read per round: one getMultipleAccounts call. */
const RECEIPTS_PER_ROUND = 100;
/** Rounds per sweep at most, so a backlog drains over several sweeps rather than holding one. */
const ROUNDS_PER_SWEEP = 10;
/**
 * The advisory lock (this class, hashtext(network)) that lets one relayer instance at a time close
 * a network's receipts.
 */
export const RECEIPT_CLOSER_LOCK_CLASS = 0x52435054;

export class ReceiptCloser {
  constructor(
    private readonly db: Db,
    private readonly store: ExecutionStore,
    private readonly chain: ChainService,
    private readonly senders: Partial<Record<NetworkName, TransactionSender>>,
  ) {}

  /** One sweep over every network; a network whose RPC fails is skipped until the next sweep. */
  async sweep(): Promise<void> {
    await Promise.all(this.chain.networks.map((network) => this.closeDue(network).catch(() => undefined)));
  }

  /** Closes the due receipts of `network`; does nothing while another instance is at it. */
  async closeDue(network: NetworkName): Promise<void> {
    const client = await this.db.connect();
    let unlocked = true;
    try {
      const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked", [
        RECEIPT_CLOSER_LOCK_CLASS,
        network,
      ]);
      if (!rows[0]!.locked) return;
      try {
        await this.rounds(network);
      } finally {
        unlocked = await client
          .query("SELECT pg_advisory_unlock($1, hashtext($2))", [RECEIPT_CLOSER_LOCK_CLASS, network])
          .then(() => true, () => false);
      }
    } finally {
      // A lock left on a pooled connection would keep every instance from closing receipts: a
      // connection that could not unlock is dropped, and its lock with it.
      client.release(!unlocked);
    }
  }

  private async rounds(network: NetworkName): Promise<void> {
    const rpc = this.chain.rpc(network);
    const market = await this.chain.market(network);
    const [clock] = await rpc.getMultipleAccounts([SYSVAR_CLOCK_PUBKEY], "confirmed");
    // Clock: slot, epoch start timestamp, epoch, leader schedule epoch, then unix_timestamp.
    const now: ChainNow = {
      unix_secs: Number(clock!.data.readBigInt64LE(32)),
      block_height: await rpc.getBlockHeight("confirmed"),
      dispute_window_secs: market.disputeWindowSecs,
    };
    for (let round = 0; round < ROUNDS_PER_SWEEP; round += 1) {
      const { candidates, progress } = await this.round(network, now);
      if (candidates < RECEIPTS_PER_ROUND || progress === 0) return;
    }
  }

  /** One batch of candidates; `progress`: receipts sent a close or marked closed. */
  private async round(network: NetworkName, now: ChainNow): Promise<{ candidates: number; progress: number }> {
    const sender = this.senders[network]!;
    // A receipt is settled before its execution is confirmed, so `confirmed_at` bounds it from
    // above: rows confirmed a window ago (by the chain's clock) are the only ones worth a read.
    // Rows whose close was sent and can still land wait for it (or for its expiry).
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT id FROM executions
       WHERE network = $1 AND state = 'settled' AND NOT receipt_in_log AND receipt_closed_at IS NULL
         AND confirmed_at < to_timestamp($2)
         AND (receipt_close_signature IS NULL OR receipt_close_last_valid_block_height < $3)
       ORDER BY receipt_dispute_seen_at NULLS FIRST, confirmed_at LIMIT $4`,
      [network, now.unix_secs - now.dispute_window_secs, now.block_height, RECEIPTS_PER_ROUND],
    );
    if (rows.length === 0) return { candidates: 0, progress: 0 };

    const programId = this.chain.programId(network);
    const receipts = await this.chain.rpc(network).getMultipleAccounts(
      rows.map((row) => receiptPda(executionIdBytes(row.id), programId)),
      "confirmed",
    );
    const gone: string[] = [];
    const due: { id: string; rent_payer: PublicKey; disputed: boolean }[] = [];
    rows.forEach((row, i) => {
      const info = receipts[i];
      if (!info) {
        gone.push(row.id);
        return;
      }
      const receipt = decodeReceipt(info.data);
      const window_ends_at_secs = Number(receipt.settledAt) + now.dispute_window_secs;
      if (now.unix_secs > window_ends_at_secs) due.push({ id: row.id, rent_payer: receipt.rentPayer, disputed: receipt.disputed });
    });
    if (gone.length > 0) {
      await this.store.markReceiptsClosed(gone);
    }
    const held = await this.openDisputes(network, due.filter((receipt) => receipt.disputed).map((receipt) => receipt.id));
    if (held.size > 0) {
      await this.store.markReceiptDisputesSeen([...held]);
    }

    // One transaction per rent payer and batch: the rent goes back to whoever paid it (a former
    // relayer key, say), and a batch of one payer keeps its known size. The fee is ours.
    const by_payer = new Map<string, { rent_payer: PublicKey; ids: string[] }>();
    for (const { id, rent_payer } of due.filter((receipt) => !held.has(receipt.id))) {
      const group = by_payer.get(rent_payer.toBase58()) ?? { rent_payer, ids: [] };
      group.ids.push(id);
      by_payer.set(rent_payer.toBase58(), group);
    }
    let sent = 0;
    for (const { rent_payer, ids: all } of by_payer.values()) {
      for (let i = 0; i < all.length; i += RECEIPTS_PER_TRANSACTION) {
        const ids = all.slice(i, i + RECEIPTS_PER_TRANSACTION);
        const signed = await sender.sign(
          ids.map((id) => closeReceiptInstruction({ programId, executionId: executionIdBytes(id), rentPayer: rent_payer })),
        );
        await this.store.recordReceiptClose(ids, signed);
        // Whatever the outcome, a later round reads these receipts again: gone means closed.
        const outcome = await sender.send(signed);
        if (outcome.kind === "processed") sent += ids.length;
      }
    }
    return { candidates: rows.length, progress: sent + gone.length };
  }

  /** Which of these disputed executions still have their Dispute account: resolution closes it. */
  private async openDisputes(network: NetworkName, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const disputes = await this.chain.rpc(network).getMultipleAccounts(
      ids.map((id) => disputePda(executionIdBytes(id), this.chain.programId(network))),
      "confirmed",
    );
    return new Set(ids.filter((_, i) => disputes[i] !== null));
  }
}

interface ChainNow {
  unix_secs: number;
  block_height: number;
  dispute_window_secs: number;
}
