// Dispute state as the relayer serves it. The relayer keeps what cannot live on chain (the payer's
// statement and files, the creator's answer: dispute-evidence.ts) and answers who may see them
// (execution-parties.ts); the chain decides the dispute itself, keyed by the execution's leaf in
// its agent's receipt log (settled-leaf.ts): its Dispute account tells the dispute, outcome
// included, and what it told is recorded, because the account goes once closed
// (dispute-outcomes.ts). No read of a dispute pages through its address's history, which anyone
// can pad.
//
// The relayer never sends close_dispute: it only returns the payer's rent (the payer paid it at
// open_dispute), anyone may send it once the dispute is resolved and the leaf's window has passed,
// and the account costs the relayer nothing while it stays. The payer (or anyone) closes it.
import { formatUsdc, toHex, type Dispute, type NetworkName } from "@agent-market/program";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import type { ExecutionStore } from "../executions/execution-store.js";
import { DisputeChain, type DisputeScan } from "./dispute-chain.js";
import { DisputeEvidence, type EvidenceInput } from "./dispute-evidence.js";
import { DisputeOutcomes } from "./dispute-outcomes.js";
import { ExecutionParties, type DisputeRole, type EvidenceRole, type ExecutionParty } from "./execution-parties.js";
import { SettledLeaves } from "./settled-leaf.js";

export type DisputeState = "none" | "open" | "upheld" | "rejected";

/** Executions read at a time while a page of disputes fills. */
const LIST_BATCH = 100;
/**
 * How often the disputes of a network are read for their webhook events: one getProgramAccounts
 * over the Dispute accounts (few: one per dispute not yet closed), a few times a minute rather
 * than at every 2 s sweep.
 */
export const DISPUTE_WATCH_INTERVAL_MS = 10_000;

export class DisputeService {
  private readonly watched_at_ms = new Map<NetworkName, number>();
  private readonly parties: ExecutionParties;
  private readonly disputes: DisputeChain;
  private readonly outcomes: DisputeOutcomes;
  private readonly evidence: DisputeEvidence;

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    store: ExecutionStore,
  ) {
    const leaves = new SettledLeaves(chain, store);
    this.parties = new ExecutionParties(db, chain);
    this.disputes = new DisputeChain(chain, leaves);
    this.outcomes = new DisputeOutcomes(db, chain, leaves);
    this.evidence = new DisputeEvidence(db);
  }

  /**
   * Records the disputes of this relayer's executions as the chain shows them, so that their
   * webhook events (dispute.opened, dispute.resolved) go out though no one reads the dispute: the
   * disputes on chain not recorded yet, those recorded open (resolution marks the account, or its
   * close removes it) and those recorded resolved without their resolving transaction, whose
   * signature this job alone looks for (dispute-outcomes.ts). At most every
   * DISPUTE_WATCH_INTERVAL_MS per network; a network whose RPC fails is tried again at the next sweep.
   */
  async watch(): Promise<void> {
    await Promise.all(
      this.chain.networks.map(async (network) => {
        if (Date.now() - (this.watched_at_ms.get(network) ?? 0) < DISPUTE_WATCH_INTERVAL_MS) return;
        this.watched_at_ms.set(network, Date.now());
        const scan = await this.disputes.all(network).catch(() => null);
        if (scan === null) {
          this.watched_at_ms.delete(network);
          return;
        }
        const { rows } = await this.db.query<{ id: string }>(
          `SELECT e.id FROM executions e LEFT JOIN dispute_outcomes d ON d.execution_id = e.id
            WHERE e.network = $1
              AND (e.id = ANY($2::text[]) AND d.resolve_signature IS NULL OR d.state = 'open')`,
          [network, scan.execution_ids],
        );
        const watched = new Set<string>();
        for (const execution of await this.parties.many(rows.map((row) => row.id))) {
          const key = await this.outcomes.watch(execution, scan.accounts);
          if (key !== null) watched.add(key);
        }
        this.outcomes.forgetLookUps(network, watched);
      }),
    );
  }

  /** Stores a statement of the payer or the creator; the hash is the one open_dispute binds. */
  async submitEvidence(wallet: string, input: EvidenceInput) {
    const prepared = this.evidence.prepare(input);
    const execution = await this.parties.one(input.execution_id);
    const role: EvidenceRole | null = execution.payer === wallet ? "payer" : execution.creator === wallet ? "creator" : null;
    if (role === null) {
      throw new ApiError("not_dispute_party", `${wallet} is neither the payer of ${execution.id} nor the creator of its agent.`);
    }
    if (execution.state !== "settled") {
      throw new ApiError("execution_not_disputable", `${execution.id} is ${execution.state}; only a settled execution can be disputed.`);
    }
    await this.disputes.requireWindowOpen(execution);
    const stored = await this.evidence.store(execution.id, role, wallet, prepared);
    // The payer's open_dispute follows its evidence, and its next read must show it.
    if (role === "payer") this.outcomes.forget(execution);
    return stored;
  }

  /** One execution's dispute, for its payer, its agent's creator or the market's arbiter. */
  async get(wallet: string, execution_id: string) {
    const execution = await this.parties.one(execution_id);
    await this.parties.requireParty(wallet, execution);
    return this.view(execution);
  }

  /**
   * The disputes the wallet takes part in as `role`, newest execution first, a page at a time.
   * Only the caller's own are read: a payer's Dispute accounts by their payer field, a creator's
   * by the agent field of each of its agents (found by their creator field), and the executions
   * of those with evidence or a recorded outcome; the arbiter's are every dispute of the markets
   * it arbitrates. Those scans hold every Dispute account of the page's executions (a payer's
   * executions' leaves name it as their payer, a creator's are against its agents), so the page
   * is answered from them and what was recorded, with no read per dispute. Another wallet's
   * disputes cost a payer or a creator nothing.
   */
  async list(wallet: string, query: { role: DisputeRole; state?: "open" | "resolved"; limit: number; starting_after?: string }) {
    const open: string[] = [];
    const agents: string[] = [];
    const networks: NetworkName[] = [];
    const scans = new Map<NetworkName, Map<string, Dispute>>();
    const add = (network: NetworkName, scan: DisputeScan) => {
      open.push(...scan.execution_ids);
      for (const [address, account] of scan.accounts) scans.get(network)!.set(address, account);
    };
    for (const network of this.chain.networks) {
      if (query.role === "arbiter" && !(await this.parties.isArbiter(network, wallet))) continue;
      networks.push(network);
      scans.set(network, new Map());
      if (query.role === "payer") add(network, await this.disputes.ofPayer(network, wallet));
      if (query.role === "arbiter") add(network, await this.disputes.all(network));
      if (query.role === "creator") {
        for (const agent of await this.disputes.agentsOf(network, wallet)) {
          agents.push(agent);
          add(network, await this.disputes.against(network, agent));
        }
      }
    }
    const params: unknown[] = [networks, open, query.state === "open"];
    const where = [
      "e.network = ANY($1::text[])",
      `(e.id = ANY($2::text[]) OR (NOT $3 AND (EXISTS (SELECT 1 FROM dispute_evidence d WHERE d.execution_id = e.id)
         OR EXISTS (SELECT 1 FROM dispute_outcomes o WHERE o.execution_id = e.id))))`,
    ];
    if (query.role === "payer") where.push(`e.wallet = $${params.push(wallet)}`);
    if (query.role === "creator") where.push(`e.agent = ANY($${params.push(agents)}::text[])`);
    if (query.starting_after !== undefined) {
      const cursor = await this.db.query<{ created_at: Date }>("SELECT created_at FROM executions WHERE id = $1", [query.starting_after]);
      if (!cursor.rows[0]) throw new ApiError("invalid_cursor", undefined, "starting_after");
      where.push(`(e.created_at, e.id) < ($${params.push(cursor.rows[0].created_at)}, $${params.push(query.starting_after)})`);
    }
    const views = [];
    let after: { created_at: Date; id: string } | undefined;
    // Executions with evidence but no dispute are skipped: read a batch at a time until a page is full.
    for (;;) {
      const batchWhere = after ? [...where, `(e.created_at, e.id) < ($${params.length + 1}, $${params.length + 2})`] : where;
      const { rows } = await this.db.query<{ id: string; created_at: Date }>(
        `SELECT e.id, e.created_at FROM executions e WHERE ${batchWhere.join(" AND ")}
         ORDER BY e.created_at DESC, e.id DESC LIMIT ${LIST_BATCH}`,
        after ? [...params, after.created_at, after.id] : params,
      );
      const parties = new Map((await this.parties.many(rows.map((row) => row.id))).map((party) => [party.id, party]));
      for (const row of rows) {
        const execution = parties.get(row.id)!;
        if (!(await this.parties.roles(wallet, execution)).includes(query.role)) continue;
        const view = await this.view(execution, scans.get(execution.network));
        if (view.state === "none") continue;
        if (query.state === "open" && view.state !== "open") continue;
        if (query.state === "resolved" && view.state === "open") continue;
        views.push(view);
        if (views.length > query.limit) break;
      }
      if (views.length > query.limit || rows.length < LIST_BATCH) break;
      after = rows[rows.length - 1]!;
    }
    return { object: "list" as const, data: views.slice(0, query.limit), has_more: views.length > query.limit };
  }

  /** One attachment's bytes, for the parties of the dispute. */
  async attachment(wallet: string, execution_id: string, evidence_id: string, position: number) {
    const execution = await this.parties.one(execution_id);
    await this.parties.requireParty(wallet, execution);
    return this.evidence.attachment(execution.id, evidence_id, position);
  }

  private async view(execution: ExecutionParty, scan?: ReadonlyMap<string, Dispute>) {
    const outcome = await this.outcomes.read(execution, scan);
    const state: DisputeState = outcome?.state ?? "none";
    const bound = outcome ? toHex(outcome.evidence_hash) : null;
    return {
      object: "dispute" as const,
      execution_id: execution.id,
      network: execution.network,
      agent: execution.agent,
      leaf_index: execution.leaf_index,
      payer: execution.payer,
      creator: execution.creator,
      state,
      amount_usdc: formatUsdc(BigInt(outcome?.amount_usdc ?? execution.amount_usdc ?? "0")),
      slashed_usdc: outcome?.slashed_usdc == null ? null : formatUsdc(BigInt(outcome.slashed_usdc)),
      evidence_hash: bound,
      opened_at: outcome?.opened_at.toISOString() ?? null,
      resolved_at: outcome?.resolved_at?.toISOString() ?? null,
      resolve_transaction: outcome?.resolve_signature ?? null,
      evidence: await this.evidence.of(execution.id, bound),
    };
  }
}
