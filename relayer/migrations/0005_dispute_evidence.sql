-- Dispute evidence: the payer's statement and files behind the hash it binds on-chain with
-- open_dispute, and the creator's answer, hashed the same way. Kept for good: nothing deletes
-- evidence, and the foreign keys refuse to drop an execution or a statement that has some.

CREATE TABLE dispute_evidence (
  id             text PRIMARY KEY,
  execution_id   text NOT NULL REFERENCES executions (id) ON DELETE RESTRICT,
  role           text NOT NULL CHECK (role IN ('payer', 'creator')),
  wallet         text NOT NULL,
  statement      text NOT NULL,
  evidence_hash  bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX dispute_evidence_execution ON dispute_evidence (execution_id, created_at, id);

CREATE TABLE dispute_attachments (
  evidence_id   text NOT NULL REFERENCES dispute_evidence (id) ON DELETE RESTRICT,
  position      integer NOT NULL CHECK (position >= 0),
  name          text NOT NULL,
  content_type  text NOT NULL,
  size_bytes    integer NOT NULL,
  sha256        bytea NOT NULL,
  content       bytea NOT NULL,
  PRIMARY KEY (evidence_id, position)
);

-- What the relayer saw of each dispute on chain. resolve_dispute closes the Dispute account, so
-- once it is gone its outcome (read from the DisputeResolved event) is only here.
CREATE TABLE dispute_outcomes (
  execution_id   text PRIMARY KEY REFERENCES executions (id) ON DELETE RESTRICT,
  state          text NOT NULL CHECK (state IN ('open', 'upheld', 'rejected')),
  amount_usdc    numeric(20, 0) NOT NULL,
  evidence_hash  bytea NOT NULL,
  opened_at      timestamptz NOT NULL,
  slashed_usdc   numeric(20, 0),
  resolved_at    timestamptz,
  resolve_signature text,
  updated_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The receipt closer leaves a receipt alone while its dispute is open; this orders such receipts
-- after the others, so that open disputes never hold up the closing of the rest.
ALTER TABLE executions ADD COLUMN receipt_dispute_seen_at timestamptz;
