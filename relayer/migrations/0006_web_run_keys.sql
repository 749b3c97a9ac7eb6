-- Web runs: an execution a wallet starts from the dashboard with its session is charged through a
-- key the relayer keeps for that wallet and environment (kind 'web'). It has no secret, so no
-- request can ever present it; it exists so that a web run takes the very path of an API call:
-- the spending reservation, the Idempotency-Key's scope, reconciliation, and the key id the escrow
-- records on chain. It is never listed, read or revoked through /v1/keys.
ALTER TABLE api_keys ADD COLUMN kind text NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'web'));
ALTER TABLE api_keys ALTER COLUMN key_hash DROP NOT NULL;
ALTER TABLE api_keys ALTER COLUMN last4 DROP NOT NULL;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_secret_of_kind
  CHECK ((kind = 'api') = (key_hash IS NOT NULL AND last4 IS NOT NULL));
CREATE UNIQUE INDEX api_keys_web_per_wallet ON api_keys (wallet, environment) WHERE kind = 'web';
