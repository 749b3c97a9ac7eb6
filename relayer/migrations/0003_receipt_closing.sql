-- Closing receipts after the dispute window, which returns their rent to the relayer. The close
-- transaction's signature and last valid block height are recorded before it is sent, so a
-- round does not send a second one while the first can still land; `receipt_closed_at` is set
-- once the chain shows the receipt gone (closed by us or, as anyone may, by someone else).

ALTER TABLE executions
  ADD COLUMN receipt_close_signature text,
  ADD COLUMN receipt_close_last_valid_block_height bigint,
  ADD COLUMN receipt_closed_at timestamptz;

CREATE INDEX executions_receipts_open ON executions (network, confirmed_at)
  WHERE state = 'settled' AND receipt_closed_at IS NULL;
