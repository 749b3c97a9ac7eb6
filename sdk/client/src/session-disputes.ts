// Disputes from the wallet's side: evidence for an execution the wallet paid for (or whose agent
// it created), and the disputes it takes part in. Opening the dispute itself is the payer's own
// on-chain transaction (open_dispute with the evidence hash), which no API can send for it.
import type { Transport } from "./http.js";
import type { Network } from "./types.js";

export type DisputeRole = "payer" | "creator" | "arbiter";
export type DisputeState = "none" | "open" | "upheld" | "rejected";

export interface EvidenceAttachmentInput {
  name: string;
  content_type: string;
  content_base64: string;
}

export interface EvidenceCreated {
  object: "dispute_evidence";
  evidence_id: string;
  execution_id: string;
  role: "payer" | "creator";
  /** 64 hex characters: what open_dispute binds on chain. */
  evidence_hash: string;
  created_at: string;
}

export interface DisputeEvidence {
  evidence_id: string;
  role: "payer" | "creator";
  wallet: string;
  evidence_hash: string;
  bound_on_chain: boolean;
  statement: string;
  attachments: { index: number; name: string; content_type: string; size_bytes: number; sha256: string }[];
  created_at: string;
}

export interface Dispute {
  object: "dispute";
  execution_id: string;
  network: Network;
  agent: string;
  payer: string;
  creator: string | null;
  state: DisputeState;
  amount_usdc: string;
  slashed_usdc: string | null;
  evidence_hash: string | null;
  opened_at: string | null;
  resolved_at: string | null;
  resolve_transaction: string | null;
  evidence: DisputeEvidence[];
}

const segment = (id: string) => encodeURIComponent(id);

export class SessionDisputes {
  constructor(private readonly transport: Transport) {}

  /** Keeps a statement and files; the payer then binds `evidence_hash` with open_dispute. */
  async submitEvidence(params: { execution_id: string; statement: string; attachments?: EvidenceAttachmentInput[] }): Promise<EvidenceCreated> {
    // Not replayable: a repeat after a lost answer would keep the statement twice.
    const { body } = await this.transport.request<EvidenceCreated>({
      method: "POST",
      path: "/v1/disputes/evidence",
      body: params,
      replayable: false,
    });
    return body;
  }

  async get(executionId: string): Promise<Dispute> {
    const { body } = await this.transport.request<Dispute>({ method: "GET", path: `/v1/disputes/${segment(executionId)}`, replayable: true });
    return body;
  }

  async list(params: { role: DisputeRole; state?: "open" | "resolved"; limit?: number; starting_after?: string }): Promise<{ object: "list"; data: Dispute[]; has_more: boolean }> {
    const { body } = await this.transport.request<{ object: "list"; data: Dispute[]; has_more: boolean }>({
      method: "GET",
      path: "/v1/disputes",
      query: { ...params },
      replayable: true,
    });
    return body;
  }
}
