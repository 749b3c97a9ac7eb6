-- Wallet sign-in, API keys and agent listings.

CREATE TABLE sign_in_nonces (
  nonce       text PRIMARY KEY,
  wallet      text NOT NULL,
  domain      text NOT NULL,
  message     text NOT NULL,
  issued_at   timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX sign_in_nonces_expires_at ON sign_in_nonces (expires_at);

CREATE TABLE sessions (
  id          text PRIMARY KEY,
  token_hash  bytea NOT NULL UNIQUE,
  wallet      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX sessions_wallet ON sessions (wallet);

-- Amounts are USDC base units; numeric(20,0) holds every u64.
CREATE TABLE api_keys (
  id                 text PRIMARY KEY,
  wallet             text NOT NULL,
  name               text NOT NULL,
  environment        text NOT NULL CHECK (environment IN ('test', 'live')),
  key_hash           bytea NOT NULL UNIQUE,
  last4              text NOT NULL,
  spending_cap_usdc  numeric(20, 0) CHECK (spending_cap_usdc >= 0),
  expires_at         timestamptz,
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_used_at       timestamptz,
  execution_count    bigint NOT NULL DEFAULT 0,
  spent_usdc         numeric(20, 0) NOT NULL DEFAULT 0,
  revoked_at         timestamptz
);
CREATE INDEX api_keys_wallet_created ON api_keys (wallet, created_at DESC, id DESC);

CREATE TABLE agent_listings (
  network              text NOT NULL CHECK (network IN ('devnet', 'mainnet')),
  agent                text NOT NULL,
  creator              text NOT NULL,
  name                 text NOT NULL,
  description          text NOT NULL,
  tags                 text[] NOT NULL,
  input_schema         jsonb NOT NULL,
  output_schema        jsonb NOT NULL,
  endpoint             text NOT NULL,
  signing_key          text NOT NULL,
  pricing              jsonb NOT NULL,
  max_execution_secs   integer NOT NULL,
  collateral_usdc      numeric(20, 0) NOT NULL,
  listing_hash         bytea NOT NULL,
  status               text NOT NULL CHECK (status IN ('active', 'paused', 'retired')),
  created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_probe_at        timestamptz,
  last_probe_latency_ms integer,
  PRIMARY KEY (network, agent)
);
CREATE INDEX agent_listings_network_created ON agent_listings (network, created_at DESC, agent DESC);
CREATE INDEX agent_listings_creator ON agent_listings (creator);
CREATE INDEX agent_listings_tags ON agent_listings USING gin (tags);
