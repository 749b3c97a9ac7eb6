-- Every table lives in the network's own schema ({{schema}}, e.g. indexer_devnet): one indexer
-- per network, each with its own events, views and checkpoint.

-- Transactions that carried at least one of the program's events, with their commitment.
CREATE TABLE {{schema}}.transactions (
  signature text PRIMARY KEY,
  slot bigint NOT NULL,
  block_time bigint,
  commitment text NOT NULL CHECK (commitment IN ('confirmed', 'finalized'))
);
CREATE INDEX transactions_unfinalized ON {{schema}}.transactions (slot) WHERE commitment = 'confirmed';

-- One row per emit_cpi! event, keyed where it sits in its transaction: whichever source
-- delivers a transaction, and however many times, its events are stored once.
CREATE TABLE {{schema}}.events (
  signature text NOT NULL REFERENCES {{schema}}.transactions ON DELETE CASCADE,
  instruction_index integer NOT NULL,
  inner_index integer NOT NULL,
  slot bigint NOT NULL,
  block_time bigint,
  commitment text NOT NULL CHECK (commitment IN ('confirmed', 'finalized')),
  name text NOT NULL,
  execution_id text,
  agent text,
  -- settle and subscribe name their fee shard in the instruction's arguments, not the event
  fee_shard smallint,
  data jsonb NOT NULL,
  PRIMARY KEY (signature, instruction_index, inner_index)
);
CREATE INDEX events_execution ON {{schema}}.events (execution_id) WHERE execution_id IS NOT NULL;
CREATE INDEX events_agent ON {{schema}}.events (agent, slot) WHERE execution_id IS NULL;
CREATE INDEX events_subscriptions ON {{schema}}.events (slot DESC, signature) WHERE name = 'Subscribed';

-- One row per execution, rebuilt from its events whenever one arrives or is dropped.
CREATE TABLE {{schema}}.executions (
  id text PRIMARY KEY,
  agent text NOT NULL,
  payer text NOT NULL,
  api_key_id text,
  creator text,
  state text NOT NULL CHECK (state IN ('open', 'settled', 'refunded', 'reclaimed')),
  refund_reason text,
  amount_usdc numeric(20, 0) NOT NULL,
  creator_share_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  fee_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  fee_shard smallint,
  used_included_call boolean,
  opened_at bigint,
  deadline bigint,
  closed_at bigint,
  open_signature text,
  open_slot bigint,
  close_signature text,
  close_slot bigint,
  dispute_state text CHECK (dispute_state IN ('open', 'upheld', 'rejected')),
  dispute_opened_at bigint,
  dispute_resolved_at bigint,
  slashed_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  -- the time the execution is bucketed and listed by: its opening, else its closing
  activity_at bigint NOT NULL,
  max_slot bigint NOT NULL,
  commitment text NOT NULL CHECK (commitment IN ('confirmed', 'finalized'))
);
CREATE INDEX executions_agent ON {{schema}}.executions (agent, activity_at DESC, id DESC);
CREATE INDEX executions_payer ON {{schema}}.executions (payer, activity_at DESC, id DESC);
CREATE INDEX executions_key ON {{schema}}.executions (api_key_id, activity_at DESC, id DESC);
CREATE INDEX executions_creator ON {{schema}}.executions (creator, activity_at DESC, id DESC);
CREATE INDEX executions_activity ON {{schema}}.executions (activity_at DESC, id DESC);
CREATE INDEX executions_disputes ON {{schema}}.executions (dispute_state, activity_at DESC, id DESC) WHERE dispute_state IS NOT NULL;

-- One row per agent, rebuilt from the agent's own events (registration, updates, collateral).
CREATE TABLE {{schema}}.agents (
  agent text PRIMARY KEY,
  agent_id text,
  creator text,
  endpoint text,
  pricing jsonb,
  collateral_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  withdrawn_usdc numeric(20, 0) NOT NULL DEFAULT 0,
  registered_at bigint,
  retired_at bigint,
  max_slot bigint NOT NULL,
  commitment text NOT NULL CHECK (commitment IN ('confirmed', 'finalized'))
);
CREATE INDEX agents_creator ON {{schema}}.agents (creator);

-- Rollups of executions by time bucket, per dimension (agent, creator, payer, api_key, shard,
-- market). Each execution adds its contribution to its hour and day buckets; a change to the
-- execution subtracts the old contribution and adds the new one in the same transaction.
CREATE TABLE {{schema}}.buckets (
  dimension text NOT NULL,
  subject text NOT NULL,
  granularity text NOT NULL CHECK (granularity IN ('hour', 'day')),
  bucket_start bigint NOT NULL,
  executions bigint NOT NULL DEFAULT 0,
  open bigint NOT NULL DEFAULT 0,
  settled bigint NOT NULL DEFAULT 0,
  refunded_timeout bigint NOT NULL DEFAULT 0,
  refunded_creator_error bigint NOT NULL DEFAULT 0,
  refunded_invalid_signature bigint NOT NULL DEFAULT 0,
  refunded_output_invalid bigint NOT NULL DEFAULT 0,
  refunded_relayer_error bigint NOT NULL DEFAULT 0,
  reclaimed bigint NOT NULL DEFAULT 0,
  spent_usdc numeric(30, 0) NOT NULL DEFAULT 0,
  earned_usdc numeric(30, 0) NOT NULL DEFAULT 0,
  fee_usdc numeric(30, 0) NOT NULL DEFAULT 0,
  refunded_usdc numeric(30, 0) NOT NULL DEFAULT 0,
  disputes_open bigint NOT NULL DEFAULT 0,
  disputes_upheld bigint NOT NULL DEFAULT 0,
  disputes_rejected bigint NOT NULL DEFAULT 0,
  slashed_usdc numeric(30, 0) NOT NULL DEFAULT 0,
  latency_count bigint NOT NULL DEFAULT 0,
  latency_slots_hist bigint[] NOT NULL,
  latency_secs_hist bigint[] NOT NULL,
  -- the newest slot that ever contributed: the bucket is final once the watermark passes it
  max_slot bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (dimension, subject, granularity, bucket_start)
);

-- Sums of the events that are not executions (subscriptions, sweeps), updated by each event's
-- sign: + when stored, − when dropped.
CREATE TABLE {{schema}}.totals (
  key text PRIMARY KEY,
  amount_usdc numeric(30, 0) NOT NULL DEFAULT 0,
  count bigint NOT NULL DEFAULT 0,
  max_slot bigint NOT NULL DEFAULT 0
);

-- Where the backfill resumes: every program signature up to `signature` is stored. Written in
-- the same database transaction as the events it covers.
CREATE TABLE {{schema}}.checkpoint (
  id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  signature text,
  slot bigint NOT NULL DEFAULT 0,
  -- every event at or below this slot is finalized (or was dropped)
  finalized_slot bigint NOT NULL DEFAULT 0,
  latest_slot bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO {{schema}}.checkpoint (id) VALUES (1);
