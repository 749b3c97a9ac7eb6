-- Settlements recorded as leaves of the agent's receipt log (settle_batch) rather than as a
-- receipt account (settle): such an execution has no receipt to close when its dispute window
-- ends, and its dispute goes through open_dispute_from_log.
ALTER TABLE executions ADD COLUMN receipt_in_log boolean NOT NULL DEFAULT false;
DROP INDEX executions_receipts_open;
CREATE INDEX executions_receipts_open ON executions (network, confirmed_at)
  WHERE state = 'settled' AND NOT receipt_in_log AND receipt_closed_at IS NULL;
