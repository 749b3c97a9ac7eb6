-- Execute protocol v2 (docs/execute-protocol.md): the creator's signature binds its escrow
-- through the escrow's nonce (Agent.escrows_opened at its open) and the units it reports, both
-- recorded with the escrow's facts and the verified result, so that a settlement re-signed later
-- rebuilds the very digest the creator signed. `leaf_index`: where the settlement sits in the
-- agent's receipt log, learned from its EscrowSettledToLog event when a dispute needs it (a
-- dispute is keyed by agent and leaf index).
--
-- The per-call design is retired: every result settles by settle_batch into the receipt log, so
-- no receipt account is left to close. Its bookkeeping goes; the program that wrote receipts is
-- gone with it (drain every execution before moving a deployment to the v2 program).
ALTER TABLE executions
  ADD COLUMN escrow_nonce numeric(20, 0),
  ADD COLUMN units numeric(20, 0),
  ADD COLUMN leaf_index numeric(20, 0);

DROP INDEX executions_receipts_open;
ALTER TABLE executions
  DROP COLUMN receipt_in_log,
  DROP COLUMN receipt_close_signature,
  DROP COLUMN receipt_close_last_valid_block_height,
  DROP COLUMN receipt_closed_at,
  DROP COLUMN receipt_dispute_seen_at;

