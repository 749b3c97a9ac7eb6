-- What bounds the executions a caller or a creator can make the relayer pay for (docs/api.md,
-- "Limits"): leases of the executions in flight, per key and per agent, shared by every relayer;
-- each agent's circuit breaker over the refunds its creator caused; why a listing was paused; and
-- the web-run key's cap and revocation.

-- A lease is held while an execution is in flight and renewed by the process that runs it; a
-- process that dies stops renewing, and its leases lapse at expires_at.
CREATE TABLE execution_leases (
  scope       text NOT NULL,
  holder      text NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (scope, holder)
);
CREATE INDEX execution_leases_holder ON execution_leases (holder);

-- Takes a lease in every scope (the key's and the agent's) or in none: the first scope whose
-- live leases reach its limit is returned (1-based), 0 when every lease was taken. Scopes are
-- locked in the order given, which callers keep fixed (key, then agent), so two never deadlock.
CREATE FUNCTION acquire_execution_leases(scopes text[], limits int[], lease_holder text, ttl_ms int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  i int;
  live int;
BEGIN
  FOR i IN 1 .. array_length(scopes, 1) LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('execution_leases/' || scopes[i], 0));
    DELETE FROM execution_leases WHERE scope = scopes[i] AND expires_at <= clock_timestamp();
    SELECT count(*) INTO live FROM execution_leases WHERE scope = scopes[i];
    IF live >= limits[i] THEN
      RETURN i;
    END IF;
  END LOOP;
  INSERT INTO execution_leases (scope, holder, expires_at)
    SELECT s, lease_holder, clock_timestamp() + ttl_ms * interval '1 millisecond' FROM unnest(scopes) AS s
    ON CONFLICT (scope, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  RETURN 0;
END
$$;

-- An agent's circuit breaker: refunds its creator caused (timeouts, errors, bad signatures,
-- invalid output) counted in a window; past the threshold the agent takes no executions until
-- opened_until, then one probe call (probe_execution, held until probe_until) decides.
CREATE TABLE agent_circuits (
  network            text NOT NULL,
  agent              text NOT NULL,
  window_started_at  timestamptz NOT NULL,
  failures           int NOT NULL,
  opened_until       timestamptz,
  opened_at          timestamptz,
  probe_execution    text,
  probe_until        timestamptz,
  PRIMARY KEY (network, agent)
);

-- Why a paused listing is paused: by its creator, or failed closed by the relayer because the
-- agent's account no longer matches what was verified (its endpoint, or its pricing and listing
-- hash).
ALTER TABLE agent_listings ADD COLUMN pause_reason text
  CHECK (pause_reason IN ('creator', 'endpoint_changed', 'terms_changed'));
UPDATE agent_listings SET pause_reason = 'creator' WHERE status = 'paused';

-- Web-run keys get a cap (the wallet's to set; 10 USDC on top of what each spent so far for the
-- keys made before caps) and can be revoked by their wallet.
UPDATE api_keys SET spending_cap_usdc = spent_usdc + 10000000 WHERE kind = 'web' AND spending_cap_usdc IS NULL;
