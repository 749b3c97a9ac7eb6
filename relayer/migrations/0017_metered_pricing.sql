-- Metered pricing (docs/program.md, "Metered pricing"): an escrow holds the most a call may cost
-- and settlement charges the units the creator signed, returning the rest to the payer. The
-- escrow's terms are recorded as the program stored them at the open (price_per_unit_usdc 0 for
-- a fixed-price call), and the charge with the settlement: spending caps and usage count it once
-- the call is settled, the held amount while it is in flight.
ALTER TABLE executions
  ADD COLUMN price_per_unit_usdc numeric(20, 0),
  ADD COLUMN max_units numeric(20, 0),
  ADD COLUMN charged_usdc numeric(20, 0);

-- Every call settled before this charged its whole escrow.
UPDATE executions SET charged_usdc = amount_usdc, price_per_unit_usdc = 0, max_units = 0
 WHERE state IN ('settling', 'settled') AND amount_usdc IS NOT NULL;
