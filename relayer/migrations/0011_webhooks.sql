-- Webhooks (docs/api.md, "Webhooks"): the endpoints a wallet registers, one delivery per event and
-- endpoint, and every attempt at it. A delivery is written by the very statement that makes its
-- event happen (an execution becoming final, a dispute recorded), so no event is ever lost
-- between the change and its delivery.

CREATE TABLE webhook_endpoints (
  id          text PRIMARY KEY,
  wallet      text NOT NULL,
  url         text NOT NULL,
  events      text[] NOT NULL,
  description text NOT NULL DEFAULT '',
  -- The signing secret as the relayer signs with it (`whsec_` and base64): an HMAC needs the very
  -- bytes, so unlike an API key it cannot be kept as a hash. Shown once, at creation.
  secret      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_endpoints_wallet ON webhook_endpoints (wallet, created_at DESC, id DESC);

-- The callback an async execution names (`callback_url`), with the secret its delivery is signed
-- with, shown once in the execution's 202. Written before that answer, so the statement that makes
-- the execution final finds it.
CREATE TABLE execution_callbacks (
  execution_id text PRIMARY KEY REFERENCES executions (id) ON DELETE CASCADE,
  url          text NOT NULL,
  secret       text NOT NULL
);

-- `id` is the message id (`webhook-id`), the same on every attempt. Deleting an endpoint deletes
-- its deliveries: nothing more is sent to it, and what a wallet can store stays bounded by its
-- endpoints. A delivery without an endpoint is an execution's callback.
CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  endpoint_id     text REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event           text NOT NULL,
  -- The execution the event is about; null for a test send.
  execution_id    text,
  -- The body exactly as first sent, so every attempt sends and signs the same bytes.
  payload         text,
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempt_count   integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  locked_until    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at     timestamptz
);
-- Each event once per endpoint: a statement that runs twice (two relayers finishing one
-- execution) adds nothing the second time.
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (endpoint_id, event, execution_id) WHERE execution_id IS NOT NULL;
CREATE UNIQUE INDEX webhook_deliveries_callback_once ON webhook_deliveries (execution_id) WHERE endpoint_id IS NULL;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
-- What the worker counts to keep one endpoint's attempts in flight bounded, and what the purge
-- deletes, each without reading an endpoint's whole history.
CREATE INDEX webhook_deliveries_pending_endpoint ON webhook_deliveries (endpoint_id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state <> 'pending';

CREATE TABLE webhook_attempts (
  delivery_id  text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  started_at   timestamptz NOT NULL,
  duration_ms  integer NOT NULL,
  -- The receiver's HTTP status, or null when none came (then `error` says why).
  status_code  integer,
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);
