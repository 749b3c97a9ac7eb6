// Opening escrows together, per agent (docs/program.md, "Batched opens"): the executions of one
// agent that are ready to open while its previous open is on its way to the chain go in the next
// transaction together, as one `open_escrow_batch`. A lone execution goes at once with its own
// `open_escrow`: nothing waits at low load. Each escrow is still its own account, opened under
// `open_escrow`'s rules for its own payer and amount; only the transaction and its fee are shared.
import { escrowPda, MAX_OPEN_BATCH, type LookupTable } from "@agent-market/program";

import type { ChainService } from "../chain/chain-service.js";
import type { LookupTables } from "../chain/lookup-tables.js";
import type { AccountData } from "../chain/rpc-client.js";
import type { SendOutcome, SignedTransaction, TransactionSender } from "../chain/tx-sender.js";
import { KeyedBatchers } from "../db/batcher.js";
import { AgentActivity } from "./agent-activity.js";
import { executionIdBytes, type ExecutionRow } from "./execution-row.js";
import type { ExecutionStore } from "./execution-store.js";
import {
  batcherOptions,
  feePayerShort,
  fittingChunks,
  openEscrowInstructions,
  senderOf,
  type BatchOptions,
  type Senders,
} from "./transactions.js";

/**
 * The row with its recorded open and the outcome of its send; `sent` null if another instance
 * moved it first. `escrow`: its escrow account read right behind the send (null: not seen yet).
 */
export interface OpenSent {
  row: ExecutionRow;
  sent: SendOutcome | null;
  escrow?: AccountData | null;
}

export class OpenBatches {
  // One open of an agent on its way at a time: what arrives meanwhile waits for the next.
  private readonly agents: KeyedBatchers<ExecutionRow, OpenSent>;
  private readonly tables: LookupTables | undefined;

  constructor(
    private readonly store: ExecutionStore,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    options: BatchOptions = {},
  ) {
    this.tables = options.tables;
    this.agents = new KeyedBatchers((rows) => this.open(rows), batcherOptions(MAX_OPEN_BATCH, options));
  }

  /**
   * Opens the escrow of `row` (in `opening`, its recorded open_escrow not sent yet, or none
   * recorded) with whatever else of its agent is ready.
   */
  submit(row: ExecutionRow): Promise<OpenSent> {
    return this.agents.submit(AgentActivity.key(row.network, row.agent), row);
  }

  /**
   * The rows in as few transactions as they fit in (a legacy transaction holds 4 to 6, a v0 one
   * loading from the agent's table 5 to 8), sent together.
   */
  private async open(rows: ExecutionRow[]): Promise<OpenSent[]> {
    const { network, agent } = rows[0]!;
    const sender = senderOf(this.senders, network);
    // Alone, a call's own open_escrow, recorded with its row, goes as it is: no write before the
    // send, so a lone caller waits no longer than with opens one by one.
    if (rows.length === 1 && rows[0]!.escrow_tx) return this.sendRecorded(rows, rows[0]!.escrow_tx, sender);
    const tables = this.tables?.tablesFor(network, agent) ?? [];
    const chunks = await fittingChunks(rows, sender, (chunk) => openEscrowInstructions(this.chain, sender, chunk), tables);
    if (tables.length === 0 && chunks.length > 1) this.tables?.want(network, agent);
    return (await Promise.all(chunks.map((chunk) => this.openChunk(chunk, sender, tables)))).flat();
  }

  /**
   * Records the chunk's transaction on every row (all or none, in place of each one's own unsent
   * open_escrow), then sends it once. A batch the program refuses (one payer's balance spent
   * meanwhile, say) is not the others' fault: each is then opened alone, and only its own refusal
   * fails it.
   */
  private async openChunk(rows: ExecutionRow[], sender: TransactionSender, tables: readonly LookupTable[]): Promise<OpenSent[]> {
    const escrow_tx = await sender.sign(await openEscrowInstructions(this.chain, sender, rows), tables);
    if (!(await this.store.recordOpen(rows, escrow_tx))) {
      if (rows.length === 1) return [{ row: rows[0]!, sent: null }];
      return (await Promise.all(rows.map((row) => this.openChunk([row], sender, tables)))).flat();
    }
    return this.sendRecorded(rows, escrow_tx, sender, tables);
  }

  /** Sends `escrow_tx`, recorded on every one of `rows`, and reads their escrows right behind it. */
  private async sendRecorded(
    rows: ExecutionRow[],
    escrow_tx: SignedTransaction,
    sender: TransactionSender,
    tables: readonly LookupTable[] = [],
  ): Promise<OpenSent[]> {
    const sending = sender.send(escrow_tx);
    // Asked in the same turn, the read travels in the send's JSON-RPC batch, right behind it: a
    // node that runs a batch in order answers with the escrows the transaction just opened, for
    // all of them in one call.
    const reading = this.chain
      .rpc(rows[0]!.network)
      .getMultipleAccounts(
        rows.map((row) => escrowPda(executionIdBytes(row.id), this.chain.programId(row.network))),
        "processed",
      )
      .catch(() => null);
    const sent = await sending;
    const escrows = await reading;
    const recorded = rows.map((row) => ({ ...row, escrow_tx }));
    if (sent.kind === "rejected" && rows.length > 1 && !feePayerShort(sent)) {
      return (await Promise.all(recorded.map((row) => this.openChunk([row], sender, tables)))).flat();
    }
    return recorded.map((row, i) => ({ row, sent, escrow: escrows?.[i] ?? null }));
  }
}
