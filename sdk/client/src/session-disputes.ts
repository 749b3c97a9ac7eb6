// Disputes from the wallet's side: evidence for an execution the wallet paid for (or whose agent
// it created), and the disputes it takes part in. Opening the dispute itself is the payer's own
// on-chain transaction (open_dispute with the evidence hash), which no API can send for it.
import type { Transport } from "./http.js";
import type { Answer, Body, Query } from "./openapi-access.js";

export type DisputeRole = Query<"/v1/disputes", "get">["role"];

export type Dispute = Answer<"/v1/disputes/{execution_id}", "get", 200>;

export type DisputeState = Dispute["state"];

export type DisputeEvidence = Dispute["evidence"][number];

export type EvidenceAttachmentInput = NonNullable<Body<"/v1/disputes/evidence", "post">["attachments"]>[number];

/** `evidence_hash` (64 hex characters) is what open_dispute binds on chain. */
export type EvidenceCreated = Answer<"/v1/disputes/evidence", "post", 201>;

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
