-- Whether the log also kept a leaf's batch root as a checkpoint (EscrowsSettledToLog.checkpoint):
-- proofs are built against the newest checkpoint at or after a leaf, which the chain keeps for
-- 64 checkpoints (at least an hour) rather than 64 batches.
ALTER TABLE {{schema}}.receipt_leaves ADD COLUMN checkpoint boolean NOT NULL DEFAULT false;
CREATE INDEX receipt_leaves_checkpoints ON {{schema}}.receipt_leaves (agent, leaf_index) WHERE checkpoint;
