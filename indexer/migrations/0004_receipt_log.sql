-- Executions settled by settle_batch are leaves of their agent's receipt log, not receipt
-- accounts: each keeps where it sits in the log, the root recorded after its batch, its leaf hash
-- and the leaf's fields (wire form: hex bytes, base58 keys, decimal u64), from which the GraphQL
-- receiptProof rebuilds the agent's tree. NULL for an execution settled by settle.
-- No row needs rebuilding: before this version the relayer never sent settle_batch.
ALTER TABLE {{schema}}.executions
  ADD COLUMN leaf_index bigint,
  ADD COLUMN log_root text,
  ADD COLUMN leaf_hash text,
  ADD COLUMN receipt_leaf jsonb;
-- A tree's leaves in order: the proof builder reads the ones it has not cached yet.
CREATE INDEX executions_receipt_log ON {{schema}}.executions (agent, leaf_index) WHERE leaf_index IS NOT NULL;
