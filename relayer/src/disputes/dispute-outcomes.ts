// What the relayer saw of a dispute on chain, recorded so that it outlives the Dispute account
// (close_dispute closes it once resolved and past the leaf's window), and the webhook events that
// recording a dispute makes happen. An execution's dispute is the one of its leaf: the Dispute
// account at (agent, leaf index), and the events that name that agent and leaf index.
import { disputePda, eventsFromInnerInstructions, fetchDispute } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { queueDeliveriesSql } from "../webhooks/webhook-events.js";
import type { ExecutionParty } from "./execution-parties.js";
import type { SettledLeaves } from "./settled-leaf.js";

/**
 * The dispute address's history read to find a resolved dispute's outcome (the account keeps
 * only whether it was upheld, not the slash or when): pages of this many
 * signatures, at most this many pages (the transactions that mention the address, the program's
 * and anyone else's, newest first). Once found, the outcome is recorded and never looked up again.
 */
export const OUTCOME_PAGE_SIZE = 100;
export const OUTCOME_MAX_PAGES = 10;

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

export async function recordDisputeOutcome(db: Db, execution_id: string, outcome: Omit<OutcomeRow, "execution_id">): Promise<OutcomeRow> {
  // The relayer learns of a dispute only here, when it reads one: the webhook events (to the
  // payer and to the agent's creator) are queued by this statement, the first time it records
  // the dispute (dispute.opened) and the first time it records its outcome (dispute.resolved).
  await db.query(
    `WITH before AS (
       SELECT state FROM dispute_outcomes WHERE execution_id = $1
     ), outcome AS (
       INSERT INTO dispute_outcomes (execution_id, state, amount_usdc, evidence_hash, opened_at, slashed_usdc, resolved_at, resolve_signature)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (execution_id) DO UPDATE SET state = EXCLUDED.state, amount_usdc = EXCLUDED.amount_usdc,
         evidence_hash = EXCLUDED.evidence_hash, opened_at = EXCLUDED.opened_at, slashed_usdc = EXCLUDED.slashed_usdc,
         resolved_at = EXCLUDED.resolved_at, resolve_signature = EXCLUDED.resolve_signature, updated_at = clock_timestamp()
       RETURNING execution_id, state
     ), events AS (
       SELECT o.execution_id, party.wallet, ev.event
         FROM outcome o JOIN executions e ON e.id = o.execution_id
         CROSS JOIN LATERAL (SELECT e.wallet UNION SELECT l.creator FROM agent_listings l
                              WHERE l.network = e.network AND l.agent = e.agent) party (wallet)
         CROSS JOIN LATERAL (SELECT 'dispute.opened' WHERE NOT EXISTS (SELECT 1 FROM before)
                             UNION ALL
                             SELECT 'dispute.resolved' WHERE o.state <> 'open'
                               AND NOT EXISTS (SELECT 1 FROM before WHERE state <> 'open')) ev (event)
     )
     ${queueDeliveriesSql("events")}`,
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
  return { execution_id, ...outcome };
}

/** The outcome of an execution's dispute, from what was recorded, else from the chain. */
export class DisputeOutcomes {
  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly leaves: SettledLeaves,
  ) {}

  /** The chain's word on the dispute, recorded so that it outlives the closed account. */
  async read(execution: ExecutionParty): Promise<OutcomeRow | null> {
    const known = await this.db.query<OutcomeRow>("SELECT * FROM dispute_outcomes WHERE execution_id = $1", [execution.id]);
    const recorded = known.rows[0] ?? null;
    if (recorded && recorded.state !== "open") return recorded;
    const leafIndex = await this.leaves.indexOf(execution);
    if (leafIndex === null) return recorded;
    const agent = new PublicKey(execution.agent);
    const connection = this.chain.connection(execution.network);
    const programId = this.chain.programId(execution.network);
    const address = disputePda(agent, leafIndex, programId);
    const account = await fetchDispute(connection, address, { commitment: "confirmed", programId });
    if (account && !account.resolved) {
      return recordDisputeOutcome(this.db, execution.id, {
        state: "open",
        amount_usdc: account.amountUsdc.toString(),
        evidence_hash: Buffer.from(account.evidenceHash),
        opened_at: new Date(Number(account.openedAt) * 1000),
        slashed_usdc: null,
        resolved_at: null,
        resolve_signature: null,
      });
    }
    // Resolved (its account says so, or is closed) or never opened: only its transactions tell
    // the slash and when, and anyone can add transactions that mention the address: each event
    // must name this very leaf, and the history is paged past the others, newest first, up to a bound.
    const ours = (data: { agent: PublicKey; leafIndex: bigint }) => data.agent.equals(agent) && data.leafIndex === leafIndex;
    let resolved: { upheld: boolean; slashedUsdc: bigint; resolvedAt: bigint; signature: string } | null = null;
    let before: string | undefined;
    for (let page = 0; page < OUTCOME_MAX_PAGES; page += 1) {
      const signatures = await connection.getSignaturesForAddress(address, { limit: OUTCOME_PAGE_SIZE, ...(before ? { before } : {}) }, "confirmed");
      for (const { signature, err } of signatures) {
        if (err !== null) continue;
        const tx = await connection.getTransaction(signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
        if (!tx) continue;
        for (const event of eventsFromInnerInstructions(tx, programId)) {
          if (event.name === "DisputeResolved" && resolved === null) {
            const data = event.data as { agent: PublicKey; leafIndex: bigint; upheld: boolean; slashedUsdc: bigint; resolvedAt: bigint };
            if (ours(data)) resolved = { ...data, signature };
          }
          if (event.name === "DisputeOpened") {
            const data = event.data as { agent: PublicKey; leafIndex: bigint; amountUsdc: bigint; evidenceHash: Uint8Array | number[]; openedAt: bigint };
            if (!ours(data)) continue;
            const opened: Omit<OutcomeRow, "execution_id"> = {
              state: "open",
              amount_usdc: data.amountUsdc.toString(),
              evidence_hash: Buffer.from(data.evidenceHash),
              opened_at: new Date(Number(data.openedAt) * 1000),
              slashed_usdc: null,
              resolved_at: null,
              resolve_signature: null,
            };
            // A leaf is disputed at most once: resolved after this opening, or still open as far
            // as history tells.
            if (resolved === null) return { execution_id: execution.id, ...opened };
            return recordDisputeOutcome(this.db, execution.id, {
              ...opened,
              state: resolved.upheld ? "upheld" : "rejected",
              slashed_usdc: resolved.slashedUsdc.toString(),
              resolved_at: new Date(Number(resolved.resolvedAt) * 1000),
              resolve_signature: resolved.signature,
            });
          }
        }
      }
      if (signatures.length < OUTCOME_PAGE_SIZE) break;
      before = signatures[signatures.length - 1]!.signature;
    }
    return recorded;
  }
}
