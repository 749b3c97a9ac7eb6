-- The exact number of stored events, kept by the writer in the transaction that changes it
-- (counting the table on each status read would scan every row).
ALTER TABLE {{schema}}.checkpoint ADD COLUMN events bigint NOT NULL DEFAULT 0;
UPDATE {{schema}}.checkpoint SET events = (SELECT count(*) FROM {{schema}}.events);
