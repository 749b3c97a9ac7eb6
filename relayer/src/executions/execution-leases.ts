// In-flight limits: an execution holds a lease in its key's scope and its agent's while it runs,
// taken before anything is sent, so a caller (or a creator calling its own agent) cannot make the
// relayer pay for more open escrows at once than the limits allow. Leases live in PostgreSQL,
// which every relayer of a deployment shares; the process running an execution renews its leases,
// and a process that dies stops renewing, so its leases lapse within LEASE_TTL_MS on their own.
// The executions that arrive while one statement takes leases are taken together by the next (one
// lock wait and one commit for all of them, instead of each queueing on its key's lock), and
// those that end while one statement frees leases are freed together by the next. Each scope's
// count is a row kept by the table's triggers (migration 0014): a limit check reads it.
import type { NetworkName } from "@agent-market/program";
import { reportBackgroundError } from "@agent-market/service";

import { Batcher } from "../db/batcher.js";
import type { Db } from "../db/database.js";
import { ApiError } from "../errors.js";

/** A lease not renewed for this long is gone: what a crashed relayer holds, it holds no longer. */
export const LEASE_TTL_MS = 30_000;
/** A third of the time to live: two renewals may fail before a live execution loses its lease. */
export const LEASE_RENEW_MS = 10_000;

export interface LeaseLimits {
  /** Executions one API key (or web-run key) may have in flight at once. */
  per_key: number;
  /** Executions one agent may have in flight at once, across every caller. */
  per_agent: number;
}

/** Most executions whose leases one statement takes. */
const ACQUIRE_BATCH = 64;
/** Most executions whose leases one statement frees. */
const RELEASE_BATCH = 256;

/**
 * Locks the scopes' count rows (in scope order) before the leases' rows, as an acquire does: a
 * release of a lease that lapsed meanwhile, which an acquire may be removing, then never waits for
 * that acquire while holding what it waits for.
 */
const RELEASE_SQL = `WITH counts AS (
     SELECT c.scope FROM execution_lease_counts c
      WHERE c.scope IN (SELECT scope FROM execution_leases WHERE holder = ANY($1))
      ORDER BY c.scope FOR UPDATE
   )
   DELETE FROM execution_leases WHERE holder = ANY($1) AND (SELECT count(*) FROM counts) >= 0`;

interface LeaseRequest {
  holder: string;
  key_scope: string;
  agent_scope: string;
}

/** What the statement answers for an execution: 0 leased, 1 its key's scope full, 2 its agent's. */
type LeaseOutcome = 0 | 1 | 2;

export class ExecutionLeases {
  /**
   * Holders this process runs, renewed together, each with how many of its parts here hold it
   * (the request that queued an async execution, and its job, may briefly overlap).
   */
  private readonly held = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly acquisitions = new Batcher<LeaseRequest, LeaseOutcome>((requests) => this.acquireTogether(requests), {
    max_batch: ACQUIRE_BATCH,
    max_in_flight: 1,
  });
  private readonly releases = new Batcher<string, void>((holders) => this.releaseTogether(holders), {
    max_batch: RELEASE_BATCH,
    max_in_flight: 1,
  });

  constructor(
    private readonly db: Db,
    private readonly limits: LeaseLimits,
  ) {
    this.timer = setInterval(() => void this.renew(), LEASE_RENEW_MS);
    this.timer.unref();
  }

  /**
   * Takes the leases of execution `holder` in the key's and the agent's scopes, or refuses with
   * 429 (`key_concurrency_limit`, `agent_concurrency_limit`) having taken none.
   */
  async acquire(holder: string, api_key_id: string, network: NetworkName, agent: string): Promise<void> {
    const full = await this.acquisitions.submit({ holder, key_scope: `key/${api_key_id}`, agent_scope: `agent/${network}/${agent}` });
    if (full === 1) {
      throw new ApiError("key_concurrency_limit", undefined, undefined, { limit: this.limits.per_key, retry_after_secs: 1 });
    }
    if (full === 2) {
      throw new ApiError("agent_concurrency_limit", undefined, undefined, { limit: this.limits.per_agent, retry_after_secs: 1 });
    }
    this.hold(holder);
  }

  /** Each request's outcome, as if each had been taken alone in the order given. */
  private async acquireTogether(requests: LeaseRequest[]): Promise<LeaseOutcome[]> {
    const { rows } = await this.db.query<{ outcomes: LeaseOutcome[] }>(
      "SELECT acquire_execution_leases_counted($1::text[], $2::text[], $3::text[], $4, $5, $6) AS outcomes",
      [
        requests.map((r) => r.holder),
        requests.map((r) => r.key_scope),
        requests.map((r) => r.agent_scope),
        this.limits.per_key,
        this.limits.per_agent,
        LEASE_TTL_MS,
      ],
    );
    return rows[0]!.outcomes;
  }

  private hold(holder: string): void {
    this.held.set(holder, (this.held.get(holder) ?? 0) + 1);
  }

  /** This process runs `holder`'s execution now (an async execution's job): it renews its leases. */
  async adopt(holder: string): Promise<void> {
    this.hold(holder);
    await this.db.query(
      "UPDATE execution_leases SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE holder = $1",
      [holder, LEASE_TTL_MS],
    );
  }

  /** This process no longer runs `holder`'s execution, which still holds its leases (queued for a job). */
  handOff(holder: string): void {
    const parts = (this.held.get(holder) ?? 1) - 1;
    if (parts > 0) this.held.set(holder, parts);
    else this.held.delete(holder);
  }

  /**
   * The execution ended (or never started): its leases are free for the next once this resolves.
   * A release that fails is reported, not thrown: the leases then lapse after LEASE_TTL_MS.
   */
  async release(holder: string): Promise<void> {
    this.held.delete(holder);
    await this.releases.submit(holder);
  }

  private async releaseTogether(holders: string[]): Promise<void[]> {
    await this.db
      .query(RELEASE_SQL, [holders])
      .catch((error: unknown) => reportBackgroundError("lease release", error, { execution_ids: holders }));
    return holders.map(() => undefined);
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    await this.db
      .query("UPDATE execution_leases SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE holder = ANY($1)", [
        [...this.held.keys()],
        LEASE_TTL_MS,
      ])
      .catch((error: unknown) => reportBackgroundError("lease renewal", error, { leases: this.held.size }));
  }

  close(): void {
    clearInterval(this.timer);
  }
}
