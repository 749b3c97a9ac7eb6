-- Executions: one row per call, moved through explicit states; every chain effect is recorded
-- (signed bytes, signature, last valid block height) before it is sent.
--
--   opening   → the open_escrow transaction is recorded and being sent
--   running   → the escrow is open; the creator is being called
--   settling  → the result verified; the settle transaction is recorded and being sent
--   refunding → the refund transaction is recorded and being sent
--   settled, refunded → final, confirmed on chain
--   failed    → final: no escrow ever opened, nothing was charged

CREATE TABLE relayer_instances (
  id            text PRIMARY KEY,
  started_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  heartbeat_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE executions (
  id                 text PRIMARY KEY,
  api_key_id         text NOT NULL REFERENCES api_keys (id),
  wallet             text NOT NULL,
  network            text NOT NULL,
  agent              text NOT NULL,
  mode               text NOT NULL CHECK (mode IN ('sync', 'async')),
  state              text NOT NULL CHECK (state IN ('opening', 'running', 'settling', 'refunding', 'settled', 'refunded', 'failed')),
  owner              text,
  task               text NOT NULL,
  parameters         jsonb NOT NULL,
  request_hash       bytea NOT NULL,
  payer_token_account text NOT NULL,
  used_subscription  boolean NOT NULL DEFAULT false,
  quoted_usdc        numeric(20, 0) NOT NULL,
  amount_usdc        numeric(20, 0),
  escrow_deadline    timestamptz,
  escrow_tx          jsonb,
  output             jsonb,
  result_hash        bytea,
  result_digest      bytea,
  creator_signature  bytea,
  signing_key        text,
  payout_account     text,
  fee_shard          integer,
  settle_tx          jsonb,
  refund_tx          jsonb,
  refund_reason      text,
  failure_code       text,
  failure_message    text,
  response_status    integer,
  response_body      jsonb,
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  escrow_opened_at   timestamptz,
  creator_started_at timestamptz,
  creator_finished_at timestamptz,
  finished_at        timestamptz,
  confirmed_at       timestamptz,
  updated_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX executions_wallet_created ON executions (wallet, created_at DESC, id DESC);
CREATE INDEX executions_unfinished ON executions (state, owner) WHERE state IN ('opening', 'running', 'settling', 'refunding');

-- Idempotency-Key per API key, kept at least 24 hours; the first request to claim a key wins.
CREATE TABLE idempotency_keys (
  api_key_id    text NOT NULL,
  key           text NOT NULL,
  fingerprint   bytea NOT NULL,
  execution_id  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (api_key_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Jobs of the in-process runner of the embedded marketplace (production runs them on BullMQ).
CREATE TABLE jobs (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  data          jsonb NOT NULL,
  run_at        timestamptz NOT NULL,
  attempts      integer NOT NULL DEFAULT 0,
  locked_until  timestamptz,
  last_error    text
);
CREATE INDEX jobs_due ON jobs (run_at);
