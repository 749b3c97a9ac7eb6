// The one ingestion path: every source (live subscription, backfill, gap check, webhook) hands
// decoded transactions to `ingest`, which stores each event once, keyed by (signature,
// instruction index, inner index), and brings the views up to date in the same database
// transaction. `drop` and `promote` are the finality task's side of the same tables.
import { randomUUID } from "node:crypto";

import type { PublicKey } from "@solana/web3.js";
import { inTransaction, type PoolClient, type Pool } from "@agent-market/service";

import { agentFromEvents, AGENT_EVENTS, type AgentRow } from "./agent-view.js";
import { BucketDeltas } from "./buckets.js";
import { ChangeSet, channelOf, type ChangeNotice } from "./change-notice.js";
import type { Commitment, DecodedTransaction } from "./event-row.js";
import { EVENT_COLUMNS, EVENT_ORDER, eventFromDb } from "./event-reads.js";
import { executionFromEvents, type EventRecord, type ExecutionRow } from "./execution-view.js";
import { disputeKeysOf, insertLeaves, refreshDisputes } from "./leaf-views.js";
import { leafRowOf } from "./receipt-leaf.js";
import { feeShardIndexes, TotalDeltas } from "./totals.js";

export interface CheckpointUpdate {
  signature: string;
  slot: number;
}

export interface IngestResult {
  /** Transactions seen for the first time. */
  transactions: number;
  /** Events stored by this call (duplicates are not counted). */
  events: number;
}

const EXECUTION_NUMBERS = ["opened_at", "deadline", "closed_at", "open_slot", "close_slot", "dispute_opened_at", "dispute_resolved_at", "activity_at", "max_slot", "fee_shard"] as const;

function executionFromDb(row: Record<string, unknown>): ExecutionRow {
  const out = { ...row } as Record<string, unknown>;
  for (const name of EXECUTION_NUMBERS) out[name] = row[name] === null ? null : Number(row[name]);
  return out as unknown as ExecutionRow;
}

/** Serializes writes in this process: the sources run concurrently, the writer does not. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    this.tail = next.catch(() => {});
    return next;
  }
}

export class EventStore {
  private readonly serial = new Serial();
  private readonly commitListeners = new Set<(notices: readonly ChangeNotice[]) => void>();
  /** The notices the write under way has queued: delivered to other processes at its commit. */
  private pendingNotices: ChangeNotice[] = [];
  private readonly noticeTag = randomUUID();
  private noticesSent = 0;
  private readonly nextNoticeId = () => `${this.noticeTag}:${++this.noticesSent}`;
  private readonly shardIndexes: ReadonlyMap<string, number>;

  /** `programId`: the program whose events this schema holds, the network's configured id. */
  constructor(
    readonly pool: Pool,
    readonly schema: string,
    readonly programId: PublicKey,
  ) {
    this.shardIndexes = feeShardIndexes(programId);
  }

  /**
   * `listener` runs after each write this store commits: a server in the same process learns of
   * it at once, before the change feed's notice comes back from PostgreSQL.
   */
  onCommit(listener: (notices: readonly ChangeNotice[]) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /**
   * A write transaction of this schema. Its first statement waits for every other process's write
   * transaction of the schema to end: the network's writer is one process, but a server that takes
   * Helius deliveries writes too, and two transactions that each rebuild an execution's row from
   * its events would otherwise each miss the other's uncommitted events. Sent with BEGIN, so it
   * costs no round trip.
   */
  private transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work, `BEGIN; SELECT pg_advisory_xact_lock(hashtext('indexer-write:${this.schema}'))`);
  }

  /** Writes one at a time, in order, and tells the commit listeners after each. */
  private write<T>(work: () => Promise<T>): Promise<T> {
    return this.serial.run(async () => {
      this.pendingNotices = [];
      try {
        const result = await work();
        const notices = this.pendingNotices;
        for (const listener of this.commitListeners) listener(notices);
        return result;
      } finally {
        this.pendingNotices = [];
      }
    });
  }

  /**
   * Stores the events of `transactions` not stored yet, and updates the views and (if given) the
   * checkpoint. `commitment` is the one the source read them at, or a choice per transaction.
   */
  ingest(transactions: readonly DecodedTransaction[], commitment: Commitment | ((tx: DecodedTransaction) => Commitment), checkpoint?: CheckpointUpdate): Promise<IngestResult> {
    return this.write(() => this.transaction((client) => this.ingestIn(client, transactions, commitment, checkpoint)));
  }

  private async ingestIn(
    client: PoolClient,
    transactions: readonly DecodedTransaction[],
    commitment: Commitment | ((tx: DecodedTransaction) => Commitment),
    checkpoint?: CheckpointUpdate,
  ): Promise<IngestResult> {
    const s = this.schema;
    const commitmentOf = typeof commitment === "function" ? commitment : () => commitment;
    const withEvents = transactions.filter((tx) => !tx.failed && tx.events.length > 0);
    let stored = { transactions: 0, events: 0 };
    if (withEvents.length > 0) {
      const inserted = await client.query<{ signature: string }>(
        `INSERT INTO ${s}.transactions (signature, slot, block_time, commitment, blockhash)
         SELECT signature, slot, block_time, commitment, blockhash FROM jsonb_to_recordset($1::jsonb) AS r(signature text, slot bigint, block_time bigint, commitment text, blockhash text)
         ORDER BY signature
         ON CONFLICT (signature) DO NOTHING RETURNING signature`,
        [JSON.stringify(withEvents.map((tx) => ({ signature: tx.signature, slot: tx.slot, block_time: tx.blockTime, commitment: commitmentOf(tx), blockhash: tx.blockhash })))],
      );
      const fresh = new Set(inserted.rows.map((row) => row.signature));
      const freshTransactions = withEvents.filter((tx) => fresh.has(tx.signature));
      const commitments = new Map(freshTransactions.map((tx) => [tx.signature, commitmentOf(tx)]));
      const events = freshTransactions.flatMap((tx) => tx.events);
      if (events.length > 0) {
        const insertedEvents = await client.query(
          `INSERT INTO ${s}.events (signature, instruction_index, inner_index, leaf_offset, slot, block_time, commitment, name, execution_id, agent, fee_shard, data)
           SELECT signature, instruction_index, inner_index, leaf_offset, slot, block_time, commitment, name, execution_id, agent, fee_shard, data
           FROM jsonb_to_recordset($1::jsonb) AS r(signature text, instruction_index int, inner_index int, leaf_offset int, slot bigint, block_time bigint,
             commitment text, name text, execution_id text, agent text, fee_shard smallint, data jsonb)
           ON CONFLICT DO NOTHING`,
          [
            JSON.stringify(
              events.map((event) => ({
                signature: event.signature,
                instruction_index: event.instructionIndex,
                inner_index: event.innerIndex,
                leaf_offset: event.leafOffset,
                slot: event.slot,
                block_time: event.blockTime,
                commitment: commitments.get(event.signature),
                name: event.name,
                execution_id: event.executionId,
                agent: event.agent,
                fee_shard: event.feeShard,
                data: event.data,
              })),
            ),
          ],
        );
        await client.query(`UPDATE ${s}.checkpoint SET events = events + $1`, [insertedEvents.rowCount ?? 0]);
        const totals = new TotalDeltas(this.shardIndexes);
        for (const event of events) totals.add(event, 1);
        await totals.write(client, s);
        await insertLeaves(
          client,
          s,
          events.filter((event) => event.name === "EscrowSettledToLog").map((event) => leafRowOf(event.signature, event.data)),
        );
        const disputed = disputeKeysOf(events);
        await refreshDisputes(client, s, disputed);
        const changes = new ChangeSet();
        // A dispute is read through its agent's leaves: a close changes no execution row.
        for (const { agent } of disputed) changes.agent(agent);
        await this.refresh(
          client,
          events.filter((event) => event.executionId !== null).map((event) => event.executionId!),
          events.filter((event) => AGENT_EVENTS.includes(event.name) && event.agent !== null).map((event) => event.agent!),
          changes,
        );
        this.pendingNotices.push(...(await changes.notify(client, s, this.nextNoticeId)));
      }
      stored = { transactions: fresh.size, events: events.length };
    }
    const newest = transactions.reduce((max, tx) => Math.max(max, tx.slot), 0);
    if (checkpoint) {
      await client.query(`UPDATE ${s}.checkpoint SET signature = $1, slot = $2, latest_slot = greatest(latest_slot, $3), updated_at = now() WHERE slot <= $2`, [
        checkpoint.signature,
        checkpoint.slot,
        newest,
      ]);
    } else if (newest > 0) {
      await client.query(`UPDATE ${s}.checkpoint SET latest_slot = greatest(latest_slot, $1)`, [newest]);
    }
    return stored;
  }

  /** Removes the transactions (gone from the chain before finalization) and corrects every view. */
  drop(signatures: readonly string[]): Promise<number> {
    if (signatures.length === 0) return Promise.resolve(0);
    return this.write(() =>
      this.transaction(async (client) => {
        const s = this.schema;
        const events = (
          await client.query(`SELECT ${EVENT_COLUMNS} FROM ${s}.events WHERE signature = ANY($1) ${EVENT_ORDER}`, [signatures])
        ).rows.map(eventFromDb);
        const totals = new TotalDeltas(this.shardIndexes);
        for (const event of events) totals.add({ ...event, feeShard: event.fee_shard }, -1);
        await totals.write(client, s);
        // The leaves go with their transactions (ON DELETE CASCADE); the disputes are rebuilt.
        const deleted = await client.query(`DELETE FROM ${s}.transactions WHERE signature = ANY($1)`, [signatures]);
        await client.query(`UPDATE ${s}.checkpoint SET events = events - $1`, [events.length]);
        const disputed = disputeKeysOf(events);
        await refreshDisputes(client, s, disputed);
        const changes = new ChangeSet();
        // A dispute is read through its agent's leaves: a close changes no execution row.
        for (const { agent } of disputed) changes.agent(agent);
        await this.refresh(
          client,
          events.filter((event) => event.execution_id !== null).map((event) => event.execution_id!),
          events.filter((event) => AGENT_EVENTS.includes(event.name) && event.agent !== null).map((event) => event.agent!),
          changes,
        );
        this.pendingNotices.push(...(await changes.notify(client, s, this.nextNoticeId)));
        return deleted.rowCount ?? 0;
      }),
    );
  }

  /** Marks the transactions finalized, and the executions and agents all of whose events now are. */
  promote(signatures: readonly string[]): Promise<void> {
    if (signatures.length === 0) return Promise.resolve();
    return this.write(() =>
      this.transaction(async (client) => {
        const s = this.schema;
        await client.query(`UPDATE ${s}.transactions SET commitment = 'finalized' WHERE signature = ANY($1)`, [signatures]);
        const touched = await client.query<{ execution_id: string | null; agent: string | null }>(
          `UPDATE ${s}.events SET commitment = 'finalized' WHERE signature = ANY($1) RETURNING execution_id, agent`,
          [signatures],
        );
        const ids = [...new Set(touched.rows.map((row) => row.execution_id).filter((id): id is string => id !== null))];
        const agents = [...new Set(touched.rows.map((row) => row.agent).filter((agent): agent is string => agent !== null))];
        const executions = await client.query<{ id: string; payer: string; agent: string; api_key_id: string | null; creator: string | null }>(
          `UPDATE ${s}.executions e SET commitment = 'finalized' WHERE id = ANY($1)
           AND NOT EXISTS (SELECT 1 FROM ${s}.events v WHERE v.execution_id = e.id AND v.commitment = 'confirmed')
           RETURNING id, payer, agent, api_key_id, creator`,
          [ids],
        );
        await client.query(
          `UPDATE ${s}.disputes d SET commitment = 'finalized' WHERE execution_id = ANY($1)
           AND NOT EXISTS (SELECT 1 FROM ${s}.events v WHERE v.agent = d.agent AND v.data->>'leafIndex' = d.leaf_index::text
                             AND v.name IN ('DisputeOpened', 'DisputeResolved', 'DisputeClosed') AND v.commitment = 'confirmed')`,
          [ids],
        );
        const promotedAgents = await client.query<{ agent: string }>(
          `UPDATE ${s}.agents a SET commitment = 'finalized' WHERE agent = ANY($1)
           AND NOT EXISTS (SELECT 1 FROM ${s}.events v WHERE v.agent = a.agent AND v.execution_id IS NULL AND v.commitment = 'confirmed')
           RETURNING agent`,
          [agents],
        );
        const changes = new ChangeSet();
        for (const row of executions.rows) changes.execution({ id: row.id, payer: row.payer, agent: row.agent, removed: false, apiKeyId: row.api_key_id, creator: row.creator });
        for (const row of promotedAgents.rows) changes.agent(row.agent);
        this.pendingNotices.push(...(await changes.notify(client, s, this.nextNoticeId)));
      }),
    );
  }

  /**
   * Sets the finalized watermark. It can move back: a transaction read late at `confirmed` below
   * it makes the figures it touches unfinal again until it is promoted.
   */
  setFinalizedSlot(slot: number): Promise<void> {
    return this.write(async () => {
      // Servers are told of a move (they keep the watermark in memory), not of every check.
      const id = this.nextNoticeId();
      const moved = await this.pool.query(
        `WITH moved AS (UPDATE ${this.schema}.checkpoint SET finalized_slot = $1 WHERE finalized_slot <> $1 RETURNING finalized_slot)
         SELECT pg_notify($2, json_build_object('finalizedSlot', finalized_slot, 'id', $3::text)::text) FROM moved`,
        [slot, channelOf(this.schema), id],
      );
      if ((moved.rowCount ?? 0) > 0) this.pendingNotices.push({ finalizedSlot: slot, id });
    });
  }

  /** Which of `signatures` are stored. */
  async known(signatures: readonly string[]): Promise<Set<string>> {
    if (signatures.length === 0) return new Set();
    const result = await this.pool.query<{ signature: string }>(`SELECT signature FROM ${this.schema}.transactions WHERE signature = ANY($1)`, [signatures]);
    return new Set(result.rows.map((row) => row.signature));
  }

  async checkpoint(): Promise<{ signature: string | null; slot: number; finalizedSlot: number; latestSlot: number }> {
    const row = (await this.pool.query(`SELECT signature, slot, finalized_slot, latest_slot FROM ${this.schema}.checkpoint`)).rows[0];
    return { signature: row.signature, slot: Number(row.slot), finalizedSlot: Number(row.finalized_slot), latestSlot: Number(row.latest_slot) };
  }

  /** Advances the checkpoint alone (a range of signatures without any of the program's events). */
  advanceCheckpoint(checkpoint: CheckpointUpdate): Promise<IngestResult> {
    return this.ingest([], "confirmed", checkpoint);
  }

  /** Rebuilds the rows of these agents and executions from their events, and moves their rollup contributions. */
  private async refresh(client: PoolClient, executionIds: string[], agentAddresses: string[], changes: ChangeSet): Promise<void> {
    const s = this.schema;
    const ids = new Set(executionIds);
    const agents = [...new Set(agentAddresses)];
    const creators = new Map<string, string | null>();
    if (agents.length > 0) {
      const oldAgents = new Map(
        (await client.query(`SELECT agent, creator FROM ${s}.agents WHERE agent = ANY($1) FOR UPDATE`, [agents])).rows.map((row) => [row.agent as string, row.creator as string | null]),
      );
      const events = (
        await client.query(`SELECT ${EVENT_COLUMNS} FROM ${s}.events WHERE agent = ANY($1) AND execution_id IS NULL ${EVENT_ORDER}`, [agents])
      ).rows.map(eventFromDb);
      // DisputeResolved belongs to an execution but slashes the agent's collateral.
      const slashes = (
        await client.query(`SELECT ${EVENT_COLUMNS} FROM ${s}.events WHERE agent = ANY($1) AND name = 'DisputeResolved' ${EVENT_ORDER}`, [agents])
      ).rows.map(eventFromDb);
      const rows: AgentRow[] = [];
      const gone: string[] = [];
      for (const agent of agents) {
        const own = [...events, ...slashes].filter((event) => event.agent === agent).sort((a, b) => a.slot - b.slot);
        const row = agentFromEvents(agent, own);
        if (row) rows.push(row);
        else gone.push(agent);
        const creator = row?.creator ?? null;
        creators.set(agent, creator);
        if (creator !== (oldAgents.get(agent) ?? null)) {
          // The creator became known (or unknown): the agent's executions move between creators' rollups.
          const affected = await client.query<{ id: string }>(`SELECT id FROM ${s}.executions WHERE agent = $1`, [agent]);
          for (const { id } of affected.rows) ids.add(id);
        }
      }
      for (const agent of agents) changes.agent(agent);
      if (gone.length > 0) await client.query(`DELETE FROM ${s}.agents WHERE agent = ANY($1)`, [gone]);
      if (rows.length > 0) {
        await client.query(
          `INSERT INTO ${s}.agents (agent, agent_id, creator, endpoint, pricing, collateral_usdc, withdrawn_usdc, registered_at, retired_at, max_slot, commitment)
           SELECT agent, agent_id, creator, endpoint, pricing, collateral_usdc, withdrawn_usdc, registered_at, retired_at, max_slot, commitment
           FROM jsonb_to_recordset($1::jsonb) AS r(agent text, agent_id text, creator text, endpoint text, pricing jsonb, collateral_usdc numeric,
             withdrawn_usdc numeric, registered_at bigint, retired_at bigint, max_slot bigint, commitment text)
           ON CONFLICT (agent) DO UPDATE SET agent_id = EXCLUDED.agent_id, creator = EXCLUDED.creator, endpoint = EXCLUDED.endpoint,
             pricing = EXCLUDED.pricing, collateral_usdc = EXCLUDED.collateral_usdc, withdrawn_usdc = EXCLUDED.withdrawn_usdc,
             registered_at = EXCLUDED.registered_at, retired_at = EXCLUDED.retired_at, max_slot = EXCLUDED.max_slot, commitment = EXCLUDED.commitment`,
          [JSON.stringify(rows)],
        );
      }
    }
    if (ids.size === 0) return;
    const idList = [...ids].sort();
    const old = new Map(
      (await client.query(`SELECT * FROM ${s}.executions WHERE id = ANY($1) ORDER BY id FOR UPDATE`, [idList])).rows.map((row) => [row.id as string, executionFromDb(row)]),
    );
    const events = (await client.query(`SELECT ${EVENT_COLUMNS} FROM ${s}.events WHERE execution_id = ANY($1) ${EVENT_ORDER}`, [idList])).rows.map(eventFromDb);
    const byId = new Map<string, EventRecord[]>();
    for (const event of events) {
      const list = byId.get(event.execution_id!) ?? [];
      list.push(event);
      byId.set(event.execution_id!, list);
    }
    const agentsOfExecutions = [...new Set(events.map((event) => event.agent!).filter((agent) => !creators.has(agent)))];
    if (agentsOfExecutions.length > 0) {
      const known = await client.query(`SELECT agent, creator FROM ${s}.agents WHERE agent = ANY($1)`, [agentsOfExecutions]);
      for (const row of known.rows) creators.set(row.agent, row.creator);
    }
    const creatorOf = (agent: string) => creators.get(agent) ?? null;
    const deltas = new BucketDeltas();
    const upserts: ExecutionRow[] = [];
    const gone: string[] = [];
    for (const id of idList) {
      const before = old.get(id) ?? null;
      const after = executionFromEvents(id, byId.get(id) ?? [], creatorOf);
      if (before && after && sameRow(before, after)) continue;
      if (after) changes.execution({ id, payer: after.payer, agent: after.agent, removed: false, apiKeyId: after.api_key_id, creator: after.creator });
      else if (before) changes.execution({ id, payer: before.payer, agent: before.agent, removed: true, apiKeyId: before.api_key_id, creator: before.creator });
      if (before?.creator && after && before.creator !== after.creator) changes.creator(before.creator);
      if (before) deltas.add(before, -1);
      if (after) {
        deltas.add(after, 1);
        upserts.push(after);
      } else if (before) gone.push(id);
    }
    if (gone.length > 0) await client.query(`DELETE FROM ${s}.executions WHERE id = ANY($1)`, [gone]);
    if (upserts.length > 0) await upsertExecutions(client, s, upserts);
    await deltas.write(client, s);
  }
}

const EXECUTION_COLUMNS: [string, string][] = [
  ["id", "text"],
  ["agent", "text"],
  ["payer", "text"],
  ["api_key_id", "text"],
  ["creator", "text"],
  ["state", "text"],
  ["refund_reason", "text"],
  ["amount_usdc", "numeric"],
  ["price_per_unit_usdc", "numeric"],
  ["max_units", "numeric"],
  ["units", "numeric"],
  ["charged_usdc", "numeric"],
  ["returned_usdc", "numeric"],
  ["creator_share_usdc", "numeric"],
  ["fee_usdc", "numeric"],
  ["fee_shard", "smallint"],
  ["used_included_call", "boolean"],
  ["opened_at", "bigint"],
  ["deadline", "bigint"],
  ["closed_at", "bigint"],
  ["open_signature", "text"],
  ["open_slot", "bigint"],
  ["close_signature", "text"],
  ["close_slot", "bigint"],
  ["dispute_state", "text"],
  ["dispute_opened_at", "bigint"],
  ["dispute_resolved_at", "bigint"],
  ["slashed_usdc", "numeric"],
  ["activity_at", "bigint"],
  ["max_slot", "bigint"],
  ["commitment", "text"],
];

function sameRow(a: ExecutionRow, b: ExecutionRow): boolean {
  const left = a as unknown as Record<string, unknown>;
  const right = b as unknown as Record<string, unknown>;
  return EXECUTION_COLUMNS.every(([name]) => String(left[name] ?? null) === String(right[name] ?? null));
}

async function upsertExecutions(client: PoolClient, schema: string, rows: ExecutionRow[]): Promise<void> {
  const names = EXECUTION_COLUMNS.map(([name]) => name);
  await client.query(
    `INSERT INTO ${schema}.executions (${names.join(", ")})
     SELECT ${names.join(", ")} FROM jsonb_to_recordset($1::jsonb) AS r(${EXECUTION_COLUMNS.map(([name, type]) => `${name} ${type}`).join(", ")})
     ON CONFLICT (id) DO UPDATE SET ${names
       .filter((name) => name !== "id")
       .map((name) => `${name} = EXCLUDED.${name}`)
       .join(", ")}`,
    [JSON.stringify(rows)],
  );
}

