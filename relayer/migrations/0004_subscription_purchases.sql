-- Subscription purchases: one row per POST /v1/agents/:agent_id/subscription that got as far as a
-- signed `subscribe`. The transaction is recorded before it is sent, so a purchase whose send
-- outcome is unknown is finished by the finish job (rebroadcast until it lands or expires).
--
--   sending   → the subscribe transaction is recorded and being sent
--   succeeded → it landed; `result` holds the subscription as the API shows it
--   failed    → it was refused or expired unlanded: nothing charged

CREATE TABLE subscription_purchases (
  id               text PRIMARY KEY,
  api_key_id       text NOT NULL REFERENCES api_keys (id),
  wallet           text NOT NULL,
  network          text NOT NULL,
  agent            text NOT NULL,
  state            text NOT NULL CHECK (state IN ('sending', 'succeeded', 'failed')),
  price_usdc       numeric(20, 0) NOT NULL,
  tx               jsonb NOT NULL,
  idempotency_key  text,
  fingerprint      bytea,
  result           jsonb,
  failure_code     text,
  failure_message  text,
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (api_key_id, idempotency_key)
);
CREATE INDEX subscription_purchases_sending ON subscription_purchases (updated_at) WHERE state = 'sending';
