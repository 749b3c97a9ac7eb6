// Dispute evidence: what cannot live on chain (a party's statement and files), kept by the relayer
// with the hash open_dispute binds, within per-party and per-file bounds, and within a quota of
// file bytes per wallet across all its executions; files are purged once their dispute is over
// or could no longer be opened (evidence-purge.ts), which gives the quota back.
import { randomBytes } from "node:crypto";

import { attachmentDigest, evidenceHash, toHex } from "@agent-market/program";
import { inTransaction } from "@agent-market/service";
import { utils } from "@coral-xyz/anchor";

import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";
import type { EvidenceRole } from "./execution-parties.js";

export const MAX_STATEMENT_CHARS = 10_000;
export const MAX_ATTACHMENTS = 5;
export const MAX_ATTACHMENT_BYTES = 1024 * 1024;
export const MAX_ATTACHMENT_NAME_CHARS = 200;
/** Five attachments of 1 MiB in base64 (4/3), the statement escaped, and room for the rest. */
export const EVIDENCE_BODY_LIMIT_BYTES = 8 * 1024 * 1024;
/** Evidence items one party (payer or creator) may submit on one execution: 80 MiB at most. */
export const MAX_EVIDENCE_PER_PARTY = 10;
/** File bytes one wallet may have kept at once, across every execution: 50 MiB. */
export const MAX_EVIDENCE_BYTES_PER_WALLET = 50 * 1024 * 1024;

export interface EvidenceInput {
  execution_id: string;
  statement: string;
  attachments?: { name: string; content_type: string; content_base64: string }[];
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

/** The attachments decoded and digested, refused by the first that is not base64 or too large. */
function decodeAttachments(input: EvidenceInput) {
  return (input.attachments ?? []).map((attachment, i) => {
    const param = `attachments[${i}].content_base64`;
    if (!BASE64.test(attachment.content_base64)) throw new ApiError("validation_failed", `${param} is not base64.`, param);
    const content = Buffer.from(attachment.content_base64, "base64");
    if (content.length > MAX_ATTACHMENT_BYTES) {
      throw new ApiError("attachment_too_large", `${param} is ${content.length} bytes once decoded, over ${MAX_ATTACHMENT_BYTES}.`, param);
    }
    return { ...attachmentDigest(attachment.name, attachment.content_type, content), content };
  });
}

export class DisputeEvidence {
  constructor(private readonly db: Db) {}

  /** Checks the attachments before anything else is read; returns what `store` keeps. */
  prepare(input: EvidenceInput) {
    const files = decodeAttachments(input);
    return { statement: input.statement, files, hash: evidenceHash(input.statement, files) };
  }

  /** Keeps `role`'s statement on `execution_id`, up to MAX_EVIDENCE_PER_PARTY of them. */
  async store(execution_id: string, role: EvidenceRole, wallet: string, evidence: ReturnType<DisputeEvidence["prepare"]>) {
    const id = `evd_${utils.bytes.bs58.encode(randomBytes(16))}`;
    const created_at = await inTransaction(this.db, async (client) => {
      // One party's submissions on one execution are counted one at a time.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('dispute_evidence:' || $1 || ':' || $2))", [execution_id, role]);
      const count = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM dispute_evidence WHERE execution_id = $1 AND role = $2",
        [execution_id, role],
      );
      if (count.rows[0]!.n >= MAX_EVIDENCE_PER_PARTY) {
        throw new ApiError(
          "evidence_limit_reached",
          `The ${role} has submitted ${MAX_EVIDENCE_PER_PARTY} evidence items on ${execution_id}, the most one execution takes.`,
        );
      }
      // A wallet's stored bytes, across executions, are counted one submission at a time too.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('dispute_evidence_wallet:' || $1))", [wallet]);
      const kept = await client.query<{ bytes: string }>(
        `SELECT coalesce(sum(a.size_bytes), 0)::text AS bytes FROM dispute_attachments a
         JOIN dispute_evidence e ON e.id = a.evidence_id WHERE e.wallet = $1`,
        [wallet],
      );
      const kept_bytes = Number(kept.rows[0]!.bytes);
      const adding_bytes = evidence.files.reduce((sum, file) => sum + file.content.length, 0);
      if (kept_bytes + adding_bytes > MAX_EVIDENCE_BYTES_PER_WALLET) {
        throw new ApiError(
          "evidence_quota_reached",
          `This wallet keeps ${kept_bytes} bytes of evidence files; ${adding_bytes} more would pass its ${MAX_EVIDENCE_BYTES_PER_WALLET} bytes. Files are purged once their dispute is resolved or its window closed.`,
          undefined,
          { kept_bytes, quota_bytes: MAX_EVIDENCE_BYTES_PER_WALLET },
        );
      }
      const inserted = await client.query<{ created_at: Date }>(
        `INSERT INTO dispute_evidence (id, execution_id, role, wallet, statement, evidence_hash) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING created_at`,
        [id, execution_id, role, wallet, evidence.statement, Buffer.from(evidence.hash)],
      );
      for (const [position, file] of evidence.files.entries()) {
        await client.query(
          `INSERT INTO dispute_attachments (evidence_id, position, name, content_type, size_bytes, sha256, content)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [id, position, file.name, file.content_type, file.content.length, Buffer.from(file.sha256), file.content],
        );
      }
      return inserted.rows[0]!.created_at;
    });
    return { object: "dispute_evidence" as const, evidence_id: id, execution_id, role, evidence_hash: toHex(evidence.hash), created_at: created_at.toISOString() };
  }

  /** The evidence on `execution_id`, oldest first; a payer's is marked when its hash is the one the dispute bound (`bound`). */
  async of(execution_id: string, bound: string | null) {
    const evidence = await this.db.query<EvidenceRow>(
      "SELECT * FROM dispute_evidence WHERE execution_id = $1 ORDER BY created_at, id",
      [execution_id],
    );
    const attachments = await this.db.query<AttachmentRow>(
      `SELECT evidence_id, position, name, content_type, size_bytes, sha256 FROM dispute_attachments
       WHERE evidence_id = ANY($1::text[]) ORDER BY evidence_id, position`,
      [evidence.rows.map((row) => row.id)],
    );
    return evidence.rows.map((row) => {
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
    });
  }

  /** One attachment's name, type and bytes. */
  async attachment(execution_id: string, evidence_id: string, position: number) {
    const { rows } = await this.db.query<{ name: string; content_type: string; content: Buffer }>(
      `SELECT a.name, a.content_type, a.content FROM dispute_attachments a JOIN dispute_evidence e ON e.id = a.evidence_id
       WHERE e.execution_id = $1 AND a.evidence_id = $2 AND a.position = $3`,
      [execution_id, evidence_id, position],
    );
    if (!rows[0]) throw new ApiError("resource_not_found", `No attachment ${position} of ${evidence_id} on ${execution_id}.`);
    return rows[0];
  }
}

/** `attachment; filename=…` safe for any name: ASCII fallback plus the UTF-8 form (RFC 6266). */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
