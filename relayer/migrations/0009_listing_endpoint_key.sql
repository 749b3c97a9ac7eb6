-- Each listing's endpoint in the form listings are compared by (src/listings/endpoint-key.ts), so
-- that an endpoint another creator lists can be found at once. Rows listed before are keyed here
-- the same way, except that an explicit default port (:443, :80) is kept.
ALTER TABLE agent_listings ADD COLUMN endpoint_key text;
UPDATE agent_listings SET endpoint_key =
  lower(substring(endpoint FROM '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*'))
  || rtrim(coalesce(substring(endpoint FROM '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)'), ''), '/');
ALTER TABLE agent_listings ALTER COLUMN endpoint_key SET NOT NULL;
CREATE INDEX agent_listings_endpoint_key ON agent_listings (network, endpoint_key);
