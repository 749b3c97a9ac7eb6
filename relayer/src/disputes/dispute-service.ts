// Dispute evidence and dispute state. The relayer keeps what cannot live on chain (the payer's
// statement and files, the creator's answer) and answers who may see them; the chain decides the
// dispute itself: an open Dispute account is read as it is, and a closed one's outcome comes from
// its DisputeResolved event, recorded here because the account is gone once resolved.
import { randomBytes } from "node:crypto";

import {
  attachmentDigest,
  decodeDispute,
  decodeReceipt,
  disputePda,
  eventsFromInnerInstructions,
  evidenceHash,
  fetchDispute,
  formatExecutionId,
  IDL,
  receiptPda,
  toHex,
  formatUsdc,
  type NetworkName,
} from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey, SYSVAR_CLOCK_PUBKEY } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import { executionIdBytes } from "../executions/execution-row.js";
import { loggedSettledAt } from "../executions/log-settlement.js";
import { recordDisputeOutcome, type OutcomeRow } from "./dispute-outcomes.js";

export const MAX_STATEMENT_CHARS = 10_000;
export const MAX_ATTACHMENTS = 5;
export const MAX_ATTACHMENT_BYTES = 1024 * 1024;
export const MAX_ATTACHMENT_NAME_CHARS = 200;
/** Five attachments of 1 MiB in base64 (4/3), the statement escaped, and room for the rest. */
export const EVIDENCE_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
/** Evidence items one party (payer or creator) may submit on one execution: 80 MiB at most. */
export const MAX_EVIDENCE_PER_PARTY = 10;

export type EvidenceRole = "payer" | "creator";
export type DisputeRole = EvidenceRole | "arbiter";
export type DisputeState = "none" | "open" | "upheld" | "rejected";

export interface EvidenceInput {
  execution_id: string;
  statement: string;
  attachments?: { name: string; content_type: string; content_base64: string }[];
}

interface ExecutionParty {
  id: string;
  network: NetworkName;
  state: string;
  payer: string;
  agent: string;
  creator: string | null;
  amount_usdc: string | null;
  /** Settled into the agent's receipt log: no receipt account tells when its window ends. */
  receipt_in_log: boolean;
  /** The settlement transaction's signature, once one was signed. */
  settle_signature: string | null;
}

interface EvidenceRow {
  id: string;
  execution_id: string;
  role: EvidenceRole;
  wallet: string;
  statement: string;
  evidence_hash: Buffer;
  created_at: Date;
}

interface AttachmentRow {
  evidence_id: string;
  position: number;
  name: string;
  content_type: string;
  size_bytes: number;
  sha256: Buffer;
}


const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const discriminator = (name: string) => utils.bytes.bs58.encode(Uint8Array.from(IDL.accounts.find((a) => a.name === name)!.discriminator));
const DISPUTE_DISCRIMINATOR = discriminator("Dispute");
const AGENT_DISCRIMINATOR = discriminator("Agent");
/** Offset of Agent.creator: right after the discriminator. */
const AGENT_CREATOR_OFFSET = 8;
/** Offset of Dispute.agent: discriminator, execution id. */
const DISPUTE_AGENT_OFFSET = 8 + 16;
/**
 * The dispute address's history read to find a closed dispute's outcome: pages of this many
 * signatures, at most this many pages (the transactions that mention the address, the program's
 * and anyone else's, newest first). Once found, the outcome is recorded and never looked up again.
 */
export const OUTCOME_PAGE_SIZE = 100;
export const OUTCOME_MAX_PAGES = 10;
/** Executions read at a time while a page of disputes fills. */
const LIST_BATCH = 100;
/**
 * How often the open disputes of a network are read for their webhook events: one
 * getProgramAccounts over the Dispute accounts (few: one per dispute under way), a few times a
 * minute rather than at every 2 s sweep.
 */
export const DISPUTE_WATCH_INTERVAL_MS = 10_000;
/** Offset of Dispute.payer: discriminator, execution id, agent. */
const DISPUTE_PAYER_OFFSET = 8 + 16 + 32;

export class DisputeService {
  private readonly watched_at_ms = new Map<NetworkName, number>();

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
  ) {}

  /**
   * Records the disputes of this relayer's executions as the chain shows them, so that their
   * webhook events (dispute.opened, dispute.resolved) go out though no one reads the dispute: the
   * disputes open on chain not recorded yet, and those recorded open whose account is gone
   * (resolution closes it). At most every DISPUTE_WATCH_INTERVAL_MS per network; a network whose
   * RPC fails is tried again at the next sweep.
   */
  async watch(): Promise<void> {
    await Promise.all(
      this.chain.networks.map(async (network) => {
        if (Date.now() - (this.watched_at_ms.get(network) ?? 0) < DISPUTE_WATCH_INTERVAL_MS) return;
        this.watched_at_ms.set(network, Date.now());
        const open = await this.openOnChain(network).catch(() => null);
        if (open === null) {
          this.watched_at_ms.delete(network);
          return;
        }
        const { rows } = await this.db.query<{ id: string }>(
          `SELECT e.id FROM executions e LEFT JOIN dispute_outcomes d ON d.execution_id = e.id
            WHERE e.network = $1
              AND (e.id = ANY($2::text[]) AND d.execution_id IS NULL OR d.state = 'open' AND NOT e.id = ANY($2::text[]))`,
          [network, open],
        );
        for (const execution of await this.executions(rows.map((row) => row.id))) await this.outcome(execution);
      }),
    );
  }

  /** Stores a statement of the payer or the creator; the hash is the one open_dispute binds. */
  async submitEvidence(wallet: string, input: EvidenceInput) {
    const files = (input.attachments ?? []).map((attachment, i) => {
      const param = `attachments[${i}].content_base64`;
      if (!BASE64.test(attachment.content_base64)) throw new ApiError("validation_failed", `${param} is not base64.`, param);
      const content = Buffer.from(attachment.content_base64, "base64");
      if (content.length > MAX_ATTACHMENT_BYTES) {
        throw new ApiError("attachment_too_large", `${param} is ${content.length} bytes once decoded, over ${MAX_ATTACHMENT_BYTES}.`, param);
      }
      return { ...attachmentDigest(attachment.name, attachment.content_type, content), content };
    });
    const execution = await this.execution(input.execution_id);
    const role: EvidenceRole | null = execution.payer === wallet ? "payer" : execution.creator === wallet ? "creator" : null;
    if (role === null) {
      throw new ApiError("not_dispute_party", `${wallet} is neither the payer of ${execution.id} nor the creator of its agent.`);
    }
    if (execution.state !== "settled") {
      throw new ApiError("execution_not_disputable", `${execution.id} is ${execution.state}; only a settled execution can be disputed.`);
    }
    await this.requireWindowOpen(execution);
    const hash = evidenceHash(input.statement, files);
    const id = `evd_${utils.bytes.bs58.encode(randomBytes(16))}`;
    const client = await this.db.connect();
    let created_at: Date;
    try {
      await client.query("BEGIN");
      // One party's submissions on one execution are counted one at a time.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('dispute_evidence:' || $1 || ':' || $2))", [execution.id, role]);
      const count = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM dispute_evidence WHERE execution_id = $1 AND role = $2",
        [execution.id, role],
      );
      if (count.rows[0]!.n >= MAX_EVIDENCE_PER_PARTY) {
        throw new ApiError(
          "evidence_limit_reached",
          `The ${role} has submitted ${MAX_EVIDENCE_PER_PARTY} evidence items on ${execution.id}, the most one execution takes.`,
        );
      }
      const inserted = await client.query<{ created_at: Date }>(
        `INSERT INTO dispute_evidence (id, execution_id, role, wallet, statement, evidence_hash) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING created_at`,
        [id, execution.id, role, wallet, input.statement, Buffer.from(hash)],
      );
      created_at = inserted.rows[0]!.created_at;
      for (const [position, file] of files.entries()) {
        await client.query(
          `INSERT INTO dispute_attachments (evidence_id, position, name, content_type, size_bytes, sha256, content)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [id, position, file.name, file.content_type, file.content.length, Buffer.from(file.sha256), file.content],
        );
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    return { object: "dispute_evidence" as const, evidence_id: id, execution_id: execution.id, role, evidence_hash: toHex(hash), created_at: created_at.toISOString() };
  }

  /** One execution's dispute, for its payer, its agent's creator or the market's arbiter. */
  async get(wallet: string, execution_id: string) {
    const execution = await this.execution(execution_id);
    await this.requireParty(wallet, execution);
    return this.view(execution);
  }

  /**
   * The disputes the wallet takes part in as `role`, newest execution first, a page at a time.
   * Only the caller's own are read: a payer's open Dispute accounts by their payer field, a
   * creator's by the agent field of each of its agents (found by their creator field), and the
   * executions of those with evidence or a recorded outcome; the arbiter's are every dispute of
   * the markets it arbitrates. Another wallet's disputes cost a payer or a creator nothing.
   */
  async list(wallet: string, query: { role: DisputeRole; state?: "open" | "resolved"; limit: number; starting_after?: string }) {
    const open: string[] = [];
    const agents: string[] = [];
    const networks: NetworkName[] = [];
    for (const network of this.chain.networks) {
      if (query.role === "arbiter" && (await this.chain.market(network)).arbiter.toBase58() !== wallet) continue;
      networks.push(network);
      if (query.role === "payer") open.push(...(await this.openOnChain(network, { offset: DISPUTE_PAYER_OFFSET, bytes: wallet })));
      if (query.role === "arbiter") open.push(...(await this.openOnChain(network)));
      if (query.role === "creator") {
        for (const agent of await this.agentsOf(network, wallet)) {
          agents.push(agent);
          open.push(...(await this.openOnChain(network, { offset: DISPUTE_AGENT_OFFSET, bytes: agent })));
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
      const parties = new Map((await this.executions(rows.map((row) => row.id))).map((party) => [party.id, party]));
      for (const row of rows) {
        const execution = parties.get(row.id)!;
        if (!(await this.roles(wallet, execution)).includes(query.role)) continue;
        const view = await this.view(execution);
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
    const execution = await this.execution(execution_id);
    await this.requireParty(wallet, execution);
    const { rows } = await this.db.query<{ name: string; content_type: string; content: Buffer }>(
      `SELECT a.name, a.content_type, a.content FROM dispute_attachments a JOIN dispute_evidence e ON e.id = a.evidence_id
       WHERE e.execution_id = $1 AND a.evidence_id = $2 AND a.position = $3`,
      [execution.id, evidence_id, position],
    );
    if (!rows[0]) throw new ApiError("resource_not_found", `No attachment ${position} of ${evidence_id} on ${execution.id}.`);
    return rows[0];
  }

  private async execution(id: string): Promise<ExecutionParty> {
    const [execution] = await this.executions([id]);
    if (!execution) throw new ApiError("resource_not_found", `No execution ${id}.`, "execution_id");
    return execution;
  }

  private async executions(ids: string[]): Promise<ExecutionParty[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<{
      id: string;
      network: NetworkName;
      state: string;
      wallet: string;
      agent: string;
      amount_usdc: string | null;
      receipt_in_log: boolean;
      settle_signature: string | null;
    }>(
      "SELECT id, network, state, wallet, agent, amount_usdc, receipt_in_log, settle_tx->>'signature' AS settle_signature FROM executions WHERE id = ANY($1::text[])",
      [ids],
    );
    const creators = new Map<string, string | null>();
    const parties: ExecutionParty[] = [];
    for (const row of rows) {
      const key = `${row.network}/${row.agent}`;
      if (!creators.has(key)) {
        // The chain says who the creator is: a listing could be stale, an agent is never closed.
        const agent = await this.chain.agent(row.network, new PublicKey(row.agent));
        creators.set(key, agent ? agent.creator.toBase58() : null);
      }
      parties.push({
        id: row.id,
        network: row.network,
        state: row.state,
        payer: row.wallet,
        agent: row.agent,
        creator: creators.get(key)!,
        amount_usdc: row.amount_usdc,
        receipt_in_log: row.receipt_in_log,
        settle_signature: row.settle_signature,
      });
    }
    return parties;
  }

  private async roles(wallet: string, execution: ExecutionParty): Promise<DisputeRole[]> {
    const roles: DisputeRole[] = [];
    if (execution.payer === wallet) roles.push("payer");
    if (execution.creator === wallet) roles.push("creator");
    if ((await this.chain.market(execution.network)).arbiter.toBase58() === wallet) roles.push("arbiter");
    return roles;
  }

  private async requireParty(wallet: string, execution: ExecutionParty): Promise<void> {
    if ((await this.roles(wallet, execution)).length === 0) {
      throw new ApiError("not_dispute_party", `${wallet} is not the payer, the creator or the arbiter of ${execution.id}.`);
    }
  }

  /** The execution ids of the open Dispute accounts on `network` whose field at `field.offset` is `field.bytes` (all without). */
  private async openOnChain(network: NetworkName, field?: { offset: number; bytes: string }): Promise<string[]> {
    const filters = [{ memcmp: { offset: 0, bytes: DISPUTE_DISCRIMINATOR } }];
    if (field !== undefined) filters.push({ memcmp: field });
    const accounts = await this.chain.connection(network).getProgramAccounts(this.chain.programId(network), { commitment: "confirmed", filters });
    return accounts.map(({ account }) => formatExecutionId(decodeDispute(account.data).executionId));
  }

  /** The agents `creator` registered on `network`, found by the Agent account's creator field. */
  private async agentsOf(network: NetworkName, creator: string): Promise<string[]> {
    const accounts = await this.chain.connection(network).getProgramAccounts(this.chain.programId(network), {
      commitment: "confirmed",
      filters: [{ memcmp: { offset: 0, bytes: AGENT_DISCRIMINATOR } }, { memcmp: { offset: AGENT_CREATOR_OFFSET, bytes: creator } }],
    });
    return accounts.map(({ pubkey }) => pubkey.toBase58());
  }

  /**
   * Evidence is taken while the dispute window is open by the chain's clock (the receipt's
   * settlement time plus the market's window, as open_dispute checks it), and after it while a
   * dispute of the execution is open, so that both parties can still speak to the arbiter.
   */
  private async requireWindowOpen(execution: ExecutionParty): Promise<void> {
    const programId = this.chain.programId(execution.network);
    const executionId = executionIdBytes(execution.id);
    let accounts;
    try {
      accounts = await this.chain
        .rpc(execution.network)
        .getMultipleAccounts([SYSVAR_CLOCK_PUBKEY, receiptPda(executionId, programId), disputePda(executionId, programId)], "confirmed");
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${execution.network} RPC did not answer.`, undefined, undefined, error);
    }
    const [clock, receipt, dispute] = accounts;
    if (dispute) return;
    // Clock: slot, epoch start timestamp, epoch, leader schedule epoch, then unix_timestamp.
    const now_secs = clock!.data.readBigInt64LE(32);
    const window_secs = BigInt((await this.chain.market(execution.network)).disputeWindowSecs);
    // Settled by settle_batch: no receipt account, its leaf's settlement time is in its event.
    const settled_secs = receipt ? decodeReceipt(receipt.data).settledAt : await this.loggedSettledAt(execution, programId, executionId);
    const ends_secs = settled_secs === null ? null : settled_secs + window_secs;
    if (ends_secs === null || now_secs > ends_secs) {
      throw new ApiError(
        "dispute_window_closed",
        ends_secs === null
          ? `${execution.id}'s receipt is closed: its dispute window has passed.`
          : `${execution.id}'s dispute window closed at ${new Date(Number(ends_secs) * 1000).toISOString()} (chain time).`,
      );
    }
  }

  private async loggedSettledAt(execution: ExecutionParty, programId: PublicKey, executionId: Uint8Array): Promise<bigint | null> {
    if (!execution.receipt_in_log || execution.settle_signature === null) return null;
    try {
      return await loggedSettledAt(this.chain.connection(execution.network), programId, execution.settle_signature, executionId);
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${execution.network} RPC did not answer.`, undefined, undefined, error);
    }
  }

  /** The chain's word on the dispute, recorded so that it outlives the closed account. */
  private async outcome(execution: ExecutionParty): Promise<OutcomeRow | null> {
    const known = await this.db.query<OutcomeRow>("SELECT * FROM dispute_outcomes WHERE execution_id = $1", [execution.id]);
    const recorded = known.rows[0] ?? null;
    if (recorded && recorded.state !== "open") return recorded;
    const connection = this.chain.connection(execution.network);
    const programId = this.chain.programId(execution.network);
    const address = disputePda(executionIdBytes(execution.id), programId);
    const open = await fetchDispute(connection, address, { commitment: "confirmed", programId });
    if (open) {
      return recordDisputeOutcome(this.db, execution.id, {
        state: "open",
        amount_usdc: open.amountUsdc.toString(),
        evidence_hash: Buffer.from(open.evidenceHash),
        opened_at: new Date(Number(open.openedAt) * 1000),
        slashed_usdc: null,
        resolved_at: null,
        resolve_signature: null,
      });
    }
    // No account: never opened, or resolved (which closes it). Only its transactions can tell,
    // and anyone can add transactions that mention the address: each event must name this very
    // execution, and the history is paged past the others, newest first, up to a bound.
    const wanted = Buffer.from(executionIdBytes(execution.id));
    const ours = (data: { executionId: Uint8Array | number[] }) => wanted.equals(Buffer.from(data.executionId));
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
            const data = event.data as { executionId: Uint8Array | number[]; upheld: boolean; slashedUsdc: bigint; resolvedAt: bigint };
            if (ours(data)) resolved = { ...data, signature };
          }
          if (event.name === "DisputeOpened") {
            const data = event.data as { executionId: Uint8Array | number[]; amountUsdc: bigint; evidenceHash: Uint8Array | number[]; openedAt: bigint };
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
            // The newest opening: resolved after it, or still open as far as history tells.
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

  private async view(execution: ExecutionParty) {
    const outcome = await this.outcome(execution);
    const evidence = await this.db.query<EvidenceRow>(
      "SELECT * FROM dispute_evidence WHERE execution_id = $1 ORDER BY created_at, id",
      [execution.id],
    );
    const attachments = await this.db.query<AttachmentRow>(
      `SELECT evidence_id, position, name, content_type, size_bytes, sha256 FROM dispute_attachments
       WHERE evidence_id = ANY($1::text[]) ORDER BY evidence_id, position`,
      [evidence.rows.map((row) => row.id)],
    );
    const state: DisputeState = outcome?.state ?? "none";
    const bound = outcome ? toHex(outcome.evidence_hash) : null;
    return {
      object: "dispute" as const,
      execution_id: execution.id,
      network: execution.network,
      agent: execution.agent,
      payer: execution.payer,
      creator: execution.creator,
      state,
      amount_usdc: formatUsdc(BigInt(outcome?.amount_usdc ?? execution.amount_usdc ?? "0")),
      slashed_usdc: outcome?.slashed_usdc == null ? null : formatUsdc(BigInt(outcome.slashed_usdc)),
      evidence_hash: bound,
      opened_at: outcome?.opened_at.toISOString() ?? null,
      resolved_at: outcome?.resolved_at?.toISOString() ?? null,
      resolve_transaction: outcome?.resolve_signature ?? null,
      evidence: evidence.rows.map((row) => {
        const hash = toHex(row.evidence_hash);
        return {
          evidence_id: row.id,
          role: row.role,
          wallet: row.wallet,
          evidence_hash: hash,
          bound_on_chain: row.role === "payer" && hash === bound,
          statement: row.statement,
          attachments: attachments.rows
            .filter((a) => a.evidence_id === row.id)
            .map((a) => ({
              index: a.position,
              name: a.name,
              content_type: a.content_type,
              size_bytes: a.size_bytes,
              sha256: toHex(a.sha256),
            })),
          created_at: row.created_at.toISOString(),
        };
      }),
    };
  }
}

/** `attachment; filename=…` safe for any name: ASCII fallback plus the UTF-8 form (RFC 6266). */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
