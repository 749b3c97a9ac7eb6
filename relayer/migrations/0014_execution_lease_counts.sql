-- How many leases each scope holds, kept by triggers on execution_leases, so that taking a lease
-- reads one row per scope instead of counting the scope's leases. Counting was most of
-- PostgreSQL's CPU at 32 concurrent calls of one key (docs/performance.md, "Lease counts"): each
-- execution inserts two leases and deletes them seconds later, so a busy scope's index range holds
-- thousands of dead entries between vacuums, and every count walked them.
--
-- The triggers are per statement, over the statement's transition table, so a release of many
-- executions in one DELETE updates each scope's count once. They count whatever writes the table
-- (this version's function and release, an earlier version's during a rolling deploy, an expired
-- lease's removal), so the counts stay exact with no writer having to keep them.
--
-- Relayers of the previous version keep writing leases while this runs (a rolling deploy): the
-- table is locked against writes until this migration commits, so that the first counts and the
-- triggers see every lease. No check keeps a count from going below zero: a count that drifted
-- must never stop the statement that frees leases.
LOCK TABLE execution_leases IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE execution_lease_counts (
  scope text PRIMARY KEY,
  held int NOT NULL
);

INSERT INTO execution_lease_counts (scope, held) SELECT scope, count(*) FROM execution_leases GROUP BY scope;

-- Count rows are locked in scope order by every statement, so two statements touching the same
-- scopes never wait on each other in a cycle.
CREATE FUNCTION count_inserted_execution_leases() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO execution_lease_counts AS c (scope, held)
    SELECT scope, count(*) FROM inserted GROUP BY scope ORDER BY scope
    ON CONFLICT (scope) DO UPDATE SET held = c.held + EXCLUDED.held;
  RETURN NULL;
END
$$;

CREATE FUNCTION count_deleted_execution_leases() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM execution_lease_counts WHERE scope IN (SELECT scope FROM deleted) ORDER BY scope FOR UPDATE;
  UPDATE execution_lease_counts c SET held = c.held - d.n
    FROM (SELECT scope, count(*)::int AS n FROM deleted GROUP BY scope) d
   WHERE c.scope = d.scope;
  RETURN NULL;
END
$$;

CREATE FUNCTION clear_execution_lease_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM execution_lease_counts;
  RETURN NULL;
END
$$;

CREATE TRIGGER execution_leases_counted_insert AFTER INSERT ON execution_leases
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_execution_leases();
CREATE TRIGGER execution_leases_counted_delete AFTER DELETE ON execution_leases
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION count_deleted_execution_leases();
CREATE TRIGGER execution_leases_counted_truncate AFTER TRUNCATE ON execution_leases
  FOR EACH STATEMENT EXECUTE FUNCTION clear_execution_lease_counts();

-- acquire_execution_leases_together's outcomes, from the counts. Leases past their time are
-- removed only from a scope this batch could fill: they only matter there, and looking for them
-- in every scope at every call walked the same dead entries as counting did. The leases are
-- inserted in one statement, in scope order, after every outcome is decided.
CREATE FUNCTION acquire_execution_leases_counted(
  holders text[], key_scopes text[], agent_scopes text[], key_limit int, agent_limit int, ttl_ms int
) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
  full_scope text;
  scopes text[];
  held int[];
  key_at int;
  agent_at int;
  i int;
  outcomes int[] := '{}';
  leased int[] := '{}';
  expires timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('execution_leases/' || t.s, 0))
     FROM (SELECT DISTINCT 0 AS part, k AS s FROM unnest(key_scopes) AS k
           UNION SELECT DISTINCT 1, a FROM unnest(agent_scopes) AS a ORDER BY 1, 2) AS t;
  -- Its count rows are locked now, in scope order, before the removal of expired leases below
  -- locks any of them: a release locks them in that order too.
  PERFORM 1 FROM execution_lease_counts c WHERE c.scope = ANY (key_scopes || agent_scopes) ORDER BY c.scope FOR UPDATE;
  FOR full_scope IN
    SELECT w.scope FROM (
      SELECT r.scope, count(*) AS wanted, max(r.lim) AS lim FROM (
        SELECT k AS scope, key_limit AS lim FROM unnest(key_scopes) AS k
        UNION ALL SELECT a, agent_limit FROM unnest(agent_scopes) AS a
      ) AS r GROUP BY r.scope
    ) AS w LEFT JOIN execution_lease_counts c ON c.scope = w.scope
    WHERE coalesce(c.held, 0) + w.wanted > w.lim
  LOOP
    DELETE FROM execution_leases WHERE scope = full_scope AND expires_at <= clock_timestamp();
  END LOOP;
  SELECT array_agg(u.scope ORDER BY u.scope), array_agg(coalesce(c.held, 0) ORDER BY u.scope) INTO scopes, held
    FROM (SELECT DISTINCT unnest(key_scopes || agent_scopes) AS scope) AS u
    LEFT JOIN execution_lease_counts c ON c.scope = u.scope;
  -- Counted from once the locks are held: waiting for them takes nothing from a lease's life.
  expires := clock_timestamp() + ttl_ms * interval '1 millisecond';
  FOR i IN 1 .. coalesce(array_length(holders, 1), 0) LOOP
    key_at := array_position(scopes, key_scopes[i]);
    agent_at := array_position(scopes, agent_scopes[i]);
    IF held[key_at] >= key_limit THEN
      outcomes := outcomes || 1;
    ELSIF held[agent_at] >= agent_limit THEN
      outcomes := outcomes || 2;
    ELSE
      held[key_at] := held[key_at] + 1;
      held[agent_at] := held[agent_at] + 1;
      leased := leased || i;
      outcomes := outcomes || 0;
    END IF;
  END LOOP;
  INSERT INTO execution_leases (scope, holder, expires_at)
    SELECT l.scope, l.holder, expires FROM (
      SELECT key_scopes[n] AS scope, holders[n] AS holder FROM unnest(leased) AS n
      UNION ALL SELECT agent_scopes[n], holders[n] FROM unnest(leased) AS n
    ) AS l ORDER BY l.scope
    ON CONFLICT (scope, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  RETURN outcomes;
END
$$;
