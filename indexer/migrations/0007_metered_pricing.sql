-- Metered pricing (issue 47): an escrow holds up to max_units × price_per_unit_usdc, its settlement
-- charges units × price (the whole amount for a fixed-price call), splits the charge 99/1 and
-- returns the rest to the payer in the same instruction. amount_usdc stays what the escrow held;
-- creator_share_usdc and fee_usdc are the split of the charge, and the rollups count the charge.
--
-- price_per_unit_usdc and max_units are 0 for a fixed-price call, as the program records them.
-- units, charged_usdc and returned_usdc are NULL while the escrow is open.
ALTER TABLE {{schema}}.executions
  ADD COLUMN price_per_unit_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  ADD COLUMN max_units numeric(20, 0) NOT NULL DEFAULT 0,
  ADD COLUMN units numeric(20, 0),
  ADD COLUMN charged_usdc numeric(20, 0),
  ADD COLUMN returned_usdc numeric(20, 0);

-- Every call stored before this version was fixed-price: a settlement charged its whole amount, a
-- refund or reclaim returned it. The rollups already count exactly that, so no bucket changes.
UPDATE {{schema}}.executions SET charged_usdc = amount_usdc, returned_usdc = 0 WHERE state = 'settled';
UPDATE {{schema}}.executions SET charged_usdc = 0, returned_usdc = amount_usdc WHERE state IN ('refunded', 'reclaimed');
UPDATE {{schema}}.executions e SET units = (l.leaf->>'units')::numeric
  FROM {{schema}}.receipt_leaves l
  WHERE e.state = 'settled' AND l.agent = e.agent AND l.execution_id = e.id AND l.signature = e.close_signature;

-- The stored events and leaves take the new fields' values for a fixed-price call, so that a row
-- rebuilt from them later (a dispute's events arriving, a dropped transaction) reads the same
-- fields as one of a new event. A leaf keeps the hash it was stored with (the formula before
-- charged and returned were hashed), which is what its log's roots commit to.
UPDATE {{schema}}.events SET data = data || jsonb_build_object('pricePerUnitUsdc', '0', 'maxUnits', '0')
  WHERE name = 'EscrowOpened' AND NOT data ? 'pricePerUnitUsdc';
UPDATE {{schema}}.events SET data = data || jsonb_build_object('chargedUsdc', data->'amountUsdc', 'returnedUsdc', '0')
  WHERE name = 'EscrowSettledToLog' AND NOT data ? 'chargedUsdc';
UPDATE {{schema}}.receipt_leaves SET leaf = leaf || jsonb_build_object('chargedUsdc', leaf->'amountUsdc', 'returnedUsdc', '0')
  WHERE NOT leaf ? 'chargedUsdc';
