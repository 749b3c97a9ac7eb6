-- Execute protocol v2 (docs/indexer.md, "Receipt log"): an execution id may be opened again, as
-- another escrow with another nonce, and settle into another leaf. Leaves and disputes are keyed
-- by (agent, leaf index), never by execution id, so no leaf shadows another and proofs for an
-- agent's whole tree hold.
--
-- The v2 program's events differ from v1's (EscrowOpened and EscrowSettledToLog gained fields,
-- EscrowSettled and ReceiptClosed are gone): an indexer moved to it starts from an empty schema.

-- The program emits one EscrowsSettledToLog a settlement batch, carrying every leaf: the decoder
-- stores each leaf as an event row of its own (EscrowSettledToLog), at the batch event's position
-- and its offset in the batch.
ALTER TABLE {{schema}}.events ADD COLUMN leaf_offset integer NOT NULL DEFAULT 0;
ALTER TABLE {{schema}}.events DROP CONSTRAINT events_pkey;
ALTER TABLE {{schema}}.events ADD PRIMARY KEY (signature, instruction_index, inner_index, leaf_offset);

-- One row per settled leaf: the leaf's fields in wire form (hex bytes, base58 keys, decimal
-- u64), its hash and the log root recorded after its batch. Removed with its transaction.
CREATE TABLE {{schema}}.receipt_leaves (
  agent text NOT NULL,
  leaf_index bigint NOT NULL,
  execution_id text NOT NULL,
  nonce numeric(20, 0) NOT NULL,
  leaf jsonb NOT NULL,
  leaf_hash text NOT NULL,
  log_root text NOT NULL,
  signature text NOT NULL REFERENCES {{schema}}.transactions ON DELETE CASCADE,
  PRIMARY KEY (agent, leaf_index)
);
CREATE INDEX receipt_leaves_execution ON {{schema}}.receipt_leaves (execution_id, agent, leaf_index);

ALTER TABLE {{schema}}.executions
  DROP COLUMN leaf_index,
  DROP COLUMN log_root,
  DROP COLUMN leaf_hash,
  DROP COLUMN receipt_leaf;

-- One row per disputed leaf, rebuilt from its DisputeOpened, DisputeResolved and DisputeClosed
-- events whenever one arrives or is dropped. The execution's own row keeps the dispute figures
-- its rollups count.
CREATE TABLE {{schema}}.disputes (
  agent text NOT NULL,
  leaf_index bigint NOT NULL,
  execution_id text NOT NULL,
  payer text NOT NULL,
  state text NOT NULL CHECK (state IN ('open', 'upheld', 'rejected')),
  amount_usdc numeric(20, 0) NOT NULL,
  evidence_hash text NOT NULL,
  opened_at bigint NOT NULL,
  resolved_at bigint,
  slashed_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  -- close_dispute returned the payer's rent: the account is gone, the outcome stays. The event
  -- carries no time: closed_at is its transaction's block time, when the node gave one.
  closed boolean NOT NULL DEFAULT false,
  closed_at bigint,
  max_slot bigint NOT NULL,
  commitment text NOT NULL CHECK (commitment IN ('confirmed', 'finalized')),
  PRIMARY KEY (agent, leaf_index)
);
CREATE INDEX disputes_execution ON {{schema}}.disputes (execution_id);
CREATE INDEX events_dispute_leaf ON {{schema}}.events (agent, (data->>'leafIndex'))
  WHERE name IN ('DisputeOpened', 'DisputeResolved', 'DisputeClosed');
