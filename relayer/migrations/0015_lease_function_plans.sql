-- The relayer's connections plan every statement at each call (plan_cache_mode =
-- force_custom_plan, sdk/service's pool: a generic plan made while `executions` was small went on
-- scanning it whole). That setting reaches the statements inside PL/pgSQL functions too, so each
-- lease taken or freed planned the functions' statements again: six in the acquire, one or two in
-- each trigger, about a quarter of what a lease costs PostgreSQL (docs/performance.md, "Lease
-- plans"). A plan kept is made again whenever the tables' statistics change: the count rows are
-- written at every lease, so autovacuum analyzes them soon after new scopes appear, and until then
-- a plan made while the tables were tiny may walk the count table whole (one row per key and
-- agent ever seen). `auto` still plans the first calls of each connection for their arguments.
ALTER FUNCTION acquire_execution_leases_counted(text[], text[], text[], int, int, int) SET plan_cache_mode = auto;
ALTER FUNCTION count_inserted_execution_leases() SET plan_cache_mode = auto;
ALTER FUNCTION count_deleted_execution_leases() SET plan_cache_mode = auto;
ALTER FUNCTION clear_execution_lease_counts() SET plan_cache_mode = auto;
