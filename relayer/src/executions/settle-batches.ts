// Settlement into the agent's receipt log (docs/program.md, "Batched settlement"), the one way a
// result is paid, group-committed per agent: the results of one agent that become ready while its
// previous settle_batch is on its way to the chain go together in the next one, under one
// signature of the creator over their batch digest (POST /sign-batch). A lone result goes at once,
// a batch of one under the signature its /execute answer already carries: nothing waits at low
// load. The program rebuilds every v2 digest from the escrows and each one's result hash and units
// and checks the signature; this code only chooses what goes together.
import {
  formatUsdc,
  toHex,
  type Agent,
  type BatchSignature,
  type LookupTable,
} from "@agent-market/program";
import type { TransactionInstruction } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { LookupTables } from "../chain/lookup-tables.js";
import type { SendOutcome, TransactionSender } from "../chain/tx-sender.js";
import type { CreatorClient } from "../creator/creator-client.js";
import { KeyedBatchers } from "../db/batcher.js";
import { AgentActivity } from "./agent-activity.js";
import type { ExecutionRow } from "./execution-row.js";
import type { ExecutionStore, SettleRecord } from "./execution-store.js";
import {
  anyFeeShard,
  batcherOptions,
  feePayerShort,
  fittingChunks,
  senderOf,
  settleInstructionsOf,
  type BatchOptions,
  type Senders,
} from "./transactions.js";

/**
 * Most escrows taken into one batch: what one v0 transaction loading the agent's accounts from its
 * table holds under one batch signature after its compute budget (docs/program.md "Batch limits";
 * the program takes up to 16; the unit limit's 40 bytes cost the twelfth escrow). More would make
 * a second transaction of a few, its fee shared by few: they wait for the next batch instead. A
 * legacy transaction (before the agent's table exists) holds 7: a batch of 11 then goes as 7 and
 * 4. A batch with units (a metered call's) carries 8 bytes more per escrow and holds fewer:
 * `fittingChunks` cuts it by its bytes.
 */
export const SETTLE_BATCH_SIZE = 11;
/** Stands for the creator's signature while sizing a transaction: only its length counts. */
const ANY_SIGNATURE = new Uint8Array(64);
/** A creator's /sign-batch is given this long at most: a settlement waits on it. */
const SIGN_BATCH_TIMEOUT_MS = 2_000;
const SIGN_BATCH_MAX_RESPONSE_BYTES = 4_096;
/** An endpoint without /sign-batch (404) is not asked again for this long: its results go alone. */
const NO_SIGN_BATCH_RETRY_MS = 10 * 60_000;

/** A verified result, ready to settle: its record lacks only the transaction that settles it. */
export interface ReadySettle {
  /** The row as its run holds it; `state` is the state it is moved from. */
  row: ExecutionRow;
  record: Omit<SettleRecord, "settle_tx" | "fee_shard">;
  agent: Agent;
}

/** The row in `settling` with the sent settle_batch's outcome; `sent` null if another instance moved it first. */
export interface SettleSent {
  row: ExecutionRow;
  sent: SendOutcome | null;
}

export class SettleBatches {
  // One batch of an agent on its way at a time: what arrives meanwhile waits for the next.
  private readonly agents: KeyedBatchers<ReadySettle, SettleSent>;
  private readonly tables: LookupTables | undefined;
  /** Endpoints that answered /sign-batch with 404, until when they are left alone. */
  private readonly unsupported = new Map<string, number>();

  constructor(
    private readonly store: ExecutionStore,
    private readonly chain: ChainService,
    private readonly senders: Senders,
    private readonly creators: CreatorClient,
    options: BatchOptions = {},
  ) {
    this.tables = options.tables;
    this.agents = new KeyedBatchers((items) => this.settle(items), batcherOptions(SETTLE_BATCH_SIZE, options));
  }

  /**
   * Settles `ready` with whatever else of its agent is ready by the time the agent's previous
   * batch is sent. Throws if the agent's receipt log could not be created: the run hands the
   * execution to the finish job, which refunds it.
   */
  submit(ready: ReadySettle): Promise<SettleSent> {
    return this.agents.submit(AgentActivity.key(ready.row.network, ready.row.agent), ready);
  }

  private async settle(items: ReadySettle[]): Promise<SettleSent[]> {
    const { network, agent } = items[0]!.row;
    const sender = senderOf(this.senders, network);
    const tables = this.tables?.tablesFor(network, agent) ?? [];
    const sizing = (chunk: ReadySettle[]) =>
      this.instructions(chunk, sender, { kind: chunk.length > 1 ? "batch" : "call", signature: ANY_SIGNATURE }, 0);
    const chunks = await fittingChunks(items, sender, sizing, tables);
    // A table pays its rent back only where the agent's batches outgrow a legacy transaction.
    if (tables.length === 0 && chunks.length > 1) this.tables?.want(network, agent);
    return (await Promise.all(chunks.map((chunk) => this.settleChunk(chunk, tables)))).flat();
  }

  /** One transaction's worth: under one batch signature if the creator gives one, else each alone. */
  private async settleChunk(items: ReadySettle[], tables: readonly LookupTable[]): Promise<SettleSent[]> {
    if (items.length > 1) {
      const signature = await this.batchSignature(items);
      if (signature) return this.send(items, { kind: "batch", signature }, tables);
    }
    return Promise.all(items.map((item) => this.alone(item, tables)));
  }

  /** One result under its own /execute signature. */
  private async alone(item: ReadySettle, tables: readonly LookupTable[]): Promise<SettleSent> {
    const [settled] = await this.send([item], { kind: "call", signature: item.record.creator_signature! }, tables);
    return settled!;
  }

  private async instructions(items: ReadySettle[], sender: TransactionSender, signed: BatchSignature, fee_shard: number): Promise<TransactionInstruction[]> {
    const { network } = items[0]!.row;
    const { payoutAccount, signingKey } = items[0]!.agent;
    const market = await this.chain.market(network);
    const settlements = items.map(({ row, record }) => ({ row: { ...row, ...record }, result_hash: record.result_hash!, units: record.units! }));
    return settleInstructionsOf(settlements, { programId: this.chain.programId(network), usdcMint: market.usdcMint, payoutAccount, signingKey }, sender, signed, fee_shard);
  }

  /**
   * Records the batch's transaction on every row (all or none), then sends it once. A batch the
   * program refuses (an escrow past its deadline, say) is not the others' fault: each is then
   * settled alone, and only its own refusal turns it into a refund.
   */
  private async send(items: ReadySettle[], signed: BatchSignature, tables: readonly LookupTable[]): Promise<SettleSent[]> {
    const sender = senderOf(this.senders, items[0]!.row.network);
    const fee_shard = anyFeeShard();
    const settle_tx = await sender.sign(await this.instructions(items, sender, signed, fee_shard), tables);
    const records = items.map((item) => ({ ...item.record, fee_shard, settle_tx }));
    const moved = await this.store.settleAll(items.map((item, i) => ({ id: item.row.id, from_state: item.row.state, record: records[i]! })));
    if (!moved) {
      if (items.length === 1) return [{ row: await this.store.row(items[0]!.row.id), sent: null }];
      // Another instance took one over: each goes alone, and only those still ours are sent.
      return Promise.all(items.map((item) => this.alone(item, tables)));
    }
    const settling = items.map((item, i): ReadySettle => ({ ...item, row: { ...item.row, ...records[i]!, state: "settling" } }));
    const sent = await sender.send(settle_tx);
    if (sent.kind === "rejected" && items.length > 1 && !feePayerShort(sent)) {
      return Promise.all(settling.map((item) => this.alone(item, tables)));
    }
    return settling.map((item) => ({ row: item.row, sent }));
  }

  /** The creator's one signature over the batch digest; null to settle each alone instead. */
  private async batchSignature(items: ReadySettle[]): Promise<Uint8Array | null> {
    const { network, agent } = items[0]!.row;
    const endpoint = items[0]!.agent.endpoint;
    if ((this.unsupported.get(endpoint) ?? 0) > Date.now()) return null;
    const outcome = await this.creators.signBatch({
      endpoint,
      network,
      agent,
      signing_key: items[0]!.agent.signingKey,
      items: items.map(({ row, record }) => ({
        execution_id: row.id,
        escrow_nonce: (record.escrow_nonce ?? row.escrow_nonce)!,
        payer: row.wallet,
        payer_token_account: row.payer_token_account,
        amount_usdc: formatUsdc(BigInt((record.amount_usdc ?? row.amount_usdc)!)),
        request_hash: toHex(row.request_hash),
        result_hash: toHex(record.result_hash!),
        units: record.units!,
        signature: toHex(record.creator_signature!),
      })),
      timeout_ms: SIGN_BATCH_TIMEOUT_MS,
      max_response_bytes: SIGN_BATCH_MAX_RESPONSE_BYTES,
    });
    if (outcome.ok) return outcome.signature;
    if (outcome.failure === "unsupported") this.unsupported.set(endpoint, Date.now() + NO_SIGN_BATCH_RETRY_MS);
    return null;
  }
}
