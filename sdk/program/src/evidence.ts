// The hash a payer binds on-chain with open_dispute: it commits to the evidence kept off-chain by
// the relayer (docs/api.md, "Disputes"), so neither side can change the statement or swap an
// attachment afterwards without the arbiter seeing that it no longer matches.
import { sha256 } from "@noble/hashes/sha2";

import { toHex } from "./bytes.js";
import { canonicalJsonHash } from "./digest.js";

export const EVIDENCE_HASH_DOMAIN = "agentmarket/evidence/v1";

export interface EvidenceAttachmentDigest {
  name: string;
  content_type: string;
  /** SHA-256 of the attachment's bytes. */
  sha256: Uint8Array;
}

/** SHA-256 of the attachment's bytes, for `evidenceHash`. */
export function attachmentDigest(name: string, content_type: string, content: Uint8Array): EvidenceAttachmentDigest {
  return { name, content_type, sha256: sha256(content) };
}

/**
 * `SHA-256(canonical JSON of {"domain": "agentmarket/evidence/v1", "statement": statement,
 * "attachments": [{"name", "content_type", "sha256": lowercase hex}, …]})`, attachments in the
 * order they were given: 32 bytes.
 */
export function evidenceHash(statement: string, attachments: readonly EvidenceAttachmentDigest[]): Uint8Array {
  return canonicalJsonHash({
    domain: EVIDENCE_HASH_DOMAIN,
    statement,
    attachments: attachments.map((a) => ({ name: a.name, content_type: a.content_type, sha256: toHex(a.sha256) })),
  });
}
