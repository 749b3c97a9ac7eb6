// What the relayer saw of a dispute on chain, recorded so that it outlives the Dispute account
// (close_dispute closes it once resolved and past the leaf's window), and the webhook events that
// recording a dispute makes happen. An execution's dispute is the one of its leaf: the Dispute
// account at (agent, leaf index), and the events that name that agent and leaf index.
//
// The account holds the whole outcome while it lives (resolved, upheld, slashed_usdc,
// resolved_at), so a read never needs the address's transaction history: anyone can pad that
// history with transactions that mention the address, for a few thousand lamports each, and a
// read that paged through it would spend the RPC quota settlement also spends. Only the
// resolving transaction's signature is not in the account; the dispute watcher, a background
// job, takes one bounded look for it when it notices a resolution (resolution below).
import { disputePda, eventsFromInnerInstructions, fetchDispute, type Dispute, type NetworkName } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import { queueDeliveriesSql } from "../webhooks/webhook-events.js";
import type { ExecutionParty } from "./execution-parties.js";
import type { SettledLeaves } from "./settled-leaf.js";

/**
 * How long one read of a Dispute account answers every read of that dispute: concurrent and
 * repeated reads of one dispute by its three parties cost one getAccountInfo a second at most.
 * Short, because a party reads a dispute again right after its own open_dispute or
 * resolve_dispute lands, and must see it; the payer's evidence, which comes right before its
 * open_dispute, drops the read at once (forget).
 */
export const DISPUTE_ACCOUNT_MAX_AGE_MS = 1_000;
/**
 * The watcher's one look for a resolving transaction: the address's newest signatures, and of
 * those that did not fail, how many transactions it reads at most. A resolution is the newest
 * transaction when the watcher notices it (within DISPUTE_WATCH_INTERVAL_MS), or the one before
 * close_dispute's; transactions anyone added since can hide it, and then the signature stays
 * unknown: the outcome itself comes from the account.
 */
export const RESOLUTION_SIGNATURES = 10;
export const RESOLUTION_TRANSACTIONS = 3;

export interface OutcomeRow {
  execution_id: string;
  state: "open" | "upheld" | "rejected";
  amount_usdc: string;
  evidence_hash: Buffer;
  opened_at: Date;
  slashed_usdc: string | null;
  resolved_at: Date | null;
  resolve_signature: string | null;
}

type Outcome = Omit<OutcomeRow, "execution_id">;

/**
 * Records what the relayer saw of a dispute; the row as it stands after. A final outcome is never
 * taken back by a read that saw the account earlier (a cached read, a watcher's scan), and a known
 * resolving transaction is never forgotten by a later record that does not know it.
 */
export async function recordDisputeOutcome(db: Db, execution_id: string, outcome: Outcome): Promise<OutcomeRow> {
  // The relayer learns of a dispute only here, when it reads one: the webhook events (to the
  // payer and to the agent's creator) are queued by this statement, the first time it records
  // the dispute (dispute.opened) and the first time it records its outcome (dispute.resolved).
  const { rows } = await db.query<OutcomeRow>(
    `WITH before AS (
       SELECT state FROM dispute_outcomes WHERE execution_id = $1
     ), outcome AS (
       INSERT INTO dispute_outcomes AS d (execution_id, state, amount_usdc, evidence_hash, opened_at, slashed_usdc, resolved_at, resolve_signature)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (execution_id) DO UPDATE SET state = EXCLUDED.state, amount_usdc = EXCLUDED.amount_usdc,
         evidence_hash = EXCLUDED.evidence_hash, opened_at = EXCLUDED.opened_at, slashed_usdc = EXCLUDED.slashed_usdc,
         resolved_at = EXCLUDED.resolved_at, resolve_signature = coalesce(EXCLUDED.resolve_signature, d.resolve_signature),
         updated_at = clock_timestamp()
       WHERE d.state = 'open' OR EXCLUDED.state <> 'open' AND d.resolve_signature IS NULL
       RETURNING d.*
     ), events AS (
       SELECT o.execution_id, party.wallet, ev.event
         FROM outcome o JOIN executions e ON e.id = o.execution_id
         CROSS JOIN LATERAL (SELECT e.wallet UNION SELECT l.creator FROM agent_listings l
                              WHERE l.network = e.network AND l.agent = e.agent) party (wallet)
         CROSS JOIN LATERAL (SELECT 'dispute.opened' WHERE NOT EXISTS (SELECT 1 FROM before)
                             UNION ALL
                             SELECT 'dispute.resolved' WHERE o.state <> 'open'
                               AND NOT EXISTS (SELECT 1 FROM before WHERE state <> 'open')) ev (event)
     ), queued AS (
       ${queueDeliveriesSql("events")}
     )
     SELECT ${OUTCOME_COLUMNS} FROM outcome
     UNION ALL
     SELECT ${OUTCOME_COLUMNS} FROM dispute_outcomes WHERE execution_id = $1 AND NOT EXISTS (SELECT 1 FROM outcome)`,
    [
      execution_id,
      outcome.state,
      outcome.amount_usdc,
      outcome.evidence_hash,
      outcome.opened_at,
      outcome.slashed_usdc,
      outcome.resolved_at,
      outcome.resolve_signature,
    ],
  );
  if (rows[0]) return rows[0];
  // Another statement inserted the row after this one's snapshot, and this one did not change it.
  const { rows: current } = await db.query<OutcomeRow>(`SELECT ${OUTCOME_COLUMNS} FROM dispute_outcomes WHERE execution_id = $1`, [execution_id]);
  return current[0]!;
}

const OUTCOME_COLUMNS = "execution_id, state, amount_usdc, evidence_hash, opened_at, slashed_usdc, resolved_at, resolve_signature";

/** The outcome the account tells, with the resolving transaction when known. */
function fromAccount(account: Dispute, resolve_signature: string | null): Outcome {
  return {
    state: !account.resolved ? "open" : account.upheld ? "upheld" : "rejected",
    amount_usdc: account.amountUsdc.toString(),
    evidence_hash: Buffer.from(account.evidenceHash),
    opened_at: new Date(Number(account.openedAt) * 1000),
    slashed_usdc: account.resolved ? account.slashedUsdc.toString() : null,
    resolved_at: account.resolved ? new Date(Number(account.resolvedAt) * 1000) : null,
    resolve_signature: account.resolved ? resolve_signature : null,
  };
}

interface Resolution {
  signature: string;
  upheld: boolean;
  slashedUsdc: bigint;
  resolvedAt: bigint;
}

/** The outcome of an execution's dispute: what was recorded, else its account. */
export class DisputeOutcomes {
  /** Reads of Dispute accounts under way or recent, oldest first, by network and address. */
  private readonly reads = new Map<string, { account: Promise<Dispute | null>; read_at_ms: number }>();
  /** The disputes the watcher looked up a resolving transaction of, in this process: once each. */
  private readonly looked_up = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly leaves: SettledLeaves,
  ) {}

  /**
   * For a caller: a final outcome recorded answers with no RPC call; otherwise the account, from
   * `scan` when the caller's read already holds every Dispute account of this execution's scope,
   * else from one cached getAccountInfo. What it shows is recorded, so that it outlives the account.
   */
  async read(execution: ExecutionParty, scan?: ReadonlyMap<string, Dispute>): Promise<OutcomeRow | null> {
    const recorded = await this.recorded(execution.id);
    if (recorded && recorded.state !== "open") return recorded;
    const leaf = await this.address(execution);
    if (leaf === null) return recorded;
    const account = scan ? (scan.get(leaf.address.toBase58()) ?? null) : await this.account(execution.network, leaf.address);
    // Gone while recorded open: closed, resolved unseen; the watcher looks for its resolution.
    if (account === null) return recorded;
    // Open, as recorded: an open dispute's fields do not change.
    if (recorded && !account.resolved) return recorded;
    return recordDisputeOutcome(this.db, execution.id, fromAccount(account, null));
  }

  /**
   * For the dispute watcher, with every Dispute account of the execution's network (`scan`):
   * records an open dispute, and a resolved one with its resolving transaction, looked up once
   * (a caller's read may have recorded the outcome first, without it). A dispute recorded open
   * whose account is gone was closed before anyone saw it resolved: its outcome is then only in
   * that one look at its history, if it finds it. The dispute's key while it still needs
   * watching, else null.
   */
  async watch(execution: ExecutionParty, scan: ReadonlyMap<string, Dispute>): Promise<string | null> {
    const recorded = await this.recorded(execution.id);
    const leaf = await this.address(execution);
    if (leaf === null) return null;
    const key = `${execution.network}:${leaf.address.toBase58()}`;
    const account = scan.get(leaf.address.toBase58()) ?? null;
    if (account === null) {
      // Another leaf's dispute names the execution id, or the outcome is recorded already.
      if (recorded?.state !== "open") return null;
      const found = await this.resolutionOnce(key, execution, leaf);
      if (found !== null) {
        await recordDisputeOutcome(this.db, execution.id, {
          ...recorded,
          state: found.upheld ? "upheld" : "rejected",
          slashed_usdc: found.slashedUsdc.toString(),
          resolved_at: new Date(Number(found.resolvedAt) * 1000),
          resolve_signature: found.signature,
        });
      }
      return key;
    }
    if (!account.resolved) {
      if (recorded === null) await recordDisputeOutcome(this.db, execution.id, fromAccount(account, null));
      return key;
    }
    // The account's word on the outcome; the event only for its signature, and only its own.
    const found = await this.resolutionOnce(key, execution, leaf);
    const signature = found !== null && found.resolvedAt === account.resolvedAt && found.upheld === account.upheld ? found.signature : null;
    if (signature !== null || recorded === null || recorded.state === "open") {
      await recordDisputeOutcome(this.db, execution.id, fromAccount(account, signature));
    }
    return key;
  }

  /** Forgets the look-ups of `network`'s disputes that no longer need watching (not in `watched`). */
  forgetLookUps(network: NetworkName, watched: ReadonlySet<string>): void {
    for (const key of this.looked_up) if (key.startsWith(`${network}:`) && !watched.has(key)) this.looked_up.delete(key);
  }

  private async recorded(execution_id: string): Promise<OutcomeRow | null> {
    const { rows } = await this.db.query<OutcomeRow>(`SELECT ${OUTCOME_COLUMNS} FROM dispute_outcomes WHERE execution_id = $1`, [execution_id]);
    return rows[0] ?? null;
  }

  /** The execution's leaf index and Dispute address; null when it has no leaf to dispute. */
  private async address(execution: ExecutionParty): Promise<{ index: bigint; address: PublicKey } | null> {
    const index = await this.leaves.indexOf(execution);
    if (index === null) return null;
    return { index, address: disputePda(new PublicKey(execution.agent), index, this.chain.programId(execution.network)) };
  }

  /** Drops the read of the execution's Dispute account kept for other reads, if any. */
  forget(execution: ExecutionParty): void {
    if (execution.leaf_index === null) return;
    const address = disputePda(new PublicKey(execution.agent), BigInt(execution.leaf_index), this.chain.programId(execution.network));
    this.reads.delete(`${execution.network}:${address.toBase58()}`);
  }

  /** The Dispute account at `address`, read at most once every DISPUTE_ACCOUNT_MAX_AGE_MS, one read at a time. */
  private account(network: NetworkName, address: PublicKey): Promise<Dispute | null> {
    const now_ms = Date.now();
    // In insertion order, which is the order they were read in: the stale ones come first.
    for (const [key, read] of this.reads) {
      if (now_ms - read.read_at_ms < DISPUTE_ACCOUNT_MAX_AGE_MS) break;
      this.reads.delete(key);
    }
    const key = `${network}:${address.toBase58()}`;
    const cached = this.reads.get(key);
    if (cached) return cached.account;
    const programId = this.chain.programId(network);
    const account = fetchDispute(this.chain.connection(network), address, { commitment: "confirmed", programId }).catch((error: unknown) => {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer.`, undefined, undefined, error);
    });
    this.reads.set(key, { account, read_at_ms: now_ms });
    account.catch(() => {
      if (this.reads.get(key)?.account === account) this.reads.delete(key);
    });
    return account;
  }

  /** resolution(), the first time the watcher asks of this dispute in this process; null after. */
  private async resolutionOnce(key: string, execution: ExecutionParty, leaf: { index: bigint; address: PublicKey }): Promise<Resolution | null> {
    if (this.looked_up.has(key)) return null;
    const found = await this.resolution(execution.network, leaf.address, new PublicKey(execution.agent), leaf.index);
    this.looked_up.add(key);
    return found;
  }

  /**
   * The DisputeResolved event of this very leaf among the address's newest transactions: one
   * getSignaturesForAddress, then at most RESOLUTION_TRANSACTIONS getTransaction; null if they
   * do not hold it.
   */
  private async resolution(network: NetworkName, address: PublicKey, agent: PublicKey, leafIndex: bigint): Promise<Resolution | null> {
    const connection = this.chain.connection(network);
    const programId = this.chain.programId(network);
    const signatures = await connection.getSignaturesForAddress(address, { limit: RESOLUTION_SIGNATURES }, "confirmed");
    for (const { signature } of signatures.filter((s) => s.err === null).slice(0, RESOLUTION_TRANSACTIONS)) {
      const tx = await connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
      if (!tx) continue;
      for (const event of eventsFromInnerInstructions(tx, programId)) {
        if (event.name === "DisputeResolved" && event.data.agent.equals(agent) && event.data.leafIndex === leafIndex) {
          return { signature, upheld: event.data.upheld, slashedUsdc: event.data.slashedUsdc, resolvedAt: event.data.resolvedAt };
        }
      }
    }
    return null;
  }
}
