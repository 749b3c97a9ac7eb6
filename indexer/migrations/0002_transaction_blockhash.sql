-- The recent blockhash of each stored transaction: finality drops a transaction the chain does not
-- answer for only once this blockhash has expired (until then it may still land). Rows stored
-- before this column existed keep NULL and are judged by their slot's age instead.
ALTER TABLE {{schema}}.transactions ADD COLUMN blockhash text;
