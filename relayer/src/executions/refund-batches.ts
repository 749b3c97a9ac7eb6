// Refunds group-committed per agent: the refunds of one agent that become due while its previous
// refund transaction is on its way go together in the next one, one `refund` instruction each, so
// they share one signature and its fee. A lone refund goes at once, alone: nothing waits at low
// load. Each instruction is the program's `refund` of one escrow, with its own reason, its own
// checks and its own event; the program refunds the whole escrow, so nothing here sets an amount.
import type { LookupTable, RefundReason } from "@agent-market/program";
import type { TransactionInstruction } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { LookupTables } from "../chain/lookup-tables.js";
import type { SendOutcome, TransactionSender } from "../chain/tx-sender.js";
import { KeyedBatchers } from "../db/batcher.js";
import { AgentActivity } from "./agent-activity.js";
import type { ExecutionRow } from "./execution-row.js";
import type { ExecutionStore, RefundRecord } from "./execution-store.js";
import { batcherOptions, feePayerShort, fittingChunks, refundOf, senderOf, type BatchOptions, type Senders } from "./transactions.js";

/**
 * Most refunds taken into one batch; a legacy transaction holds about 9 refunds of one agent
 * (≈ 90 bytes each past the first's 446), a v0 one loading from the agent's table more, and a
 * batch that does not fit is sent in as few transactions as it fits in.
 */
export const REFUND_BATCH_SIZE = 16;

/** A refund due: the row as its run holds it (`state` is the state it is moved from) and what to record. */
export interface DueRefund {
  row: ExecutionRow;
  record: Omit<RefundRecord, "refund_tx">;
}

/** The row in `refunding` with the sent transaction's outcome; `sent` null if another instance moved it first. */
export interface RefundSent {
  row: ExecutionRow;
  sent: SendOutcome | null;
}

export class RefundBatches {
  // One refund transaction of an agent on its way at a time: what is due meanwhile waits for the next.
  private readonly agents: KeyedBatchers<DueRefund, RefundSent>;
  private readonly tables: LookupTables | undefined;

  constructor(
    private readonly store: ExecutionStore,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    options: BatchOptions = {},
  ) {
    this.tables = options.tables;
    this.agents = new KeyedBatchers((items) => this.refund(items), batcherOptions(REFUND_BATCH_SIZE, options));
  }

  /** Refunds `due` with whatever else of its agent is due by the time the agent's previous refund is sent. */
  submit(due: DueRefund): Promise<RefundSent> {
    return this.agents.submit(AgentActivity.key(due.row.network, due.row.agent), due);
  }

  private async refund(items: DueRefund[]): Promise<RefundSent[]> {
    const { network, agent } = items[0]!.row;
    const sender = senderOf(this.senders, network);
    const tables = this.tables?.tablesFor(network, agent) ?? [];
    const chunks = await fittingChunks(items, sender, (chunk) => this.instructions(chunk, sender), tables);
    if (tables.length === 0 && chunks.length > 1) this.tables?.want(network, agent);
    return (await Promise.all(chunks.map((chunk) => this.send(chunk, sender, tables)))).flat();
  }

  /**
   * Records the transaction on every row (all or none), then sends it once. A transaction the
   * program refuses (one escrow already closed by its payer's reclaim, say) is not the others'
   * fault: each is then refunded alone.
   */
  private async send(items: DueRefund[], sender: TransactionSender, tables: readonly LookupTable[]): Promise<RefundSent[]> {
    const refund_tx = await sender.sign(await this.instructions(items, sender), tables);
    const records = items.map((item): RefundRecord => ({ ...item.record, refund_tx }));
    const moved = await this.store.refundAll(items.map((item, i) => ({ id: item.row.id, from_state: item.row.state, record: records[i]! })));
    if (!moved) {
      if (items.length === 1) return [{ row: await this.store.row(items[0]!.row.id), sent: null }];
      // Another instance took one over: each goes alone, and only those still ours are sent.
      return (await Promise.all(items.map((item) => this.send([item], sender, tables)))).flat();
    }
    const refunding = items.map((item, i): DueRefund => ({ ...item, row: { ...item.row, ...records[i]!, state: "refunding" } }));
    const sent = await sender.send(refund_tx);
    if (sent.kind === "rejected" && items.length > 1 && !feePayerShort(sent)) {
      return (await Promise.all(refunding.map((item) => this.send([item], sender, tables)))).flat();
    }
    return refunding.map((item) => ({ row: item.row, sent }));
  }

  private async instructions(items: DueRefund[], sender: TransactionSender): Promise<TransactionInstruction[]> {
    const { network } = items[0]!.row;
    const { usdcMint } = await this.chain.market(network);
    const programId = this.chain.programId(network);
    return items.map(({ row, record }) => refundOf(row, record.refund_reason as RefundReason, usdcMint, sender, programId));
  }
}
