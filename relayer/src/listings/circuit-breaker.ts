// Each agent's circuit breaker. A refund its creator caused (a timeout, an error status, an
// unreachable service, a bad signature, an invalid output) costs the relayer two transactions and
// the payer nothing, so an agent that fails, by accident or on purpose, would spend the relayer's
// SOL as fast as it is called. Such refunds are counted per agent over a window; past the
// threshold the circuit opens and the agent takes no executions (503 `agent_circuit_open`, before
// anything is sent) for the cool-off; then one call is let through as a probe (half-open): a
// settlement closes the circuit, a creator-caused refund opens it for another cool-off. The state
// is a row of `agent_circuits`, which every relayer shares; listings read it with the listing
// (listing-service.ts), so admission costs no extra round trip.
import type { NetworkName } from "@agent-market/program";

import type { Db } from "../db/database.js";

export interface BreakerConfig {
  /** Creator-caused refunds within the window that open the circuit. */
  failures: number;
  window_secs: number;
  /** How long an open circuit refuses executions before its probe. */
  cooloff_secs: number;
}

/** Longest a probe holds the half-open circuit: the longest execution (900 s) and a margin. */
export const PROBE_HOLD_SECS = 1_020;

/** The circuit as a listing carries it (columns of agent_circuits). */
export interface CircuitRow {
  opened_until: Date | null;
  opened_at: Date | null;
  probe_execution: string | null;
  probe_until: Date | null;
}

/** agent_circuits' columns as JSON: timestamps come as text. */
export interface CircuitJson {
  opened_until: string | null;
  opened_at: string | null;
  probe_execution: string | null;
  probe_until: string | null;
}

// The listing's circuit, read with it (in a RETURNING too) rather than by a second query.
export const CIRCUIT_COLUMN =
  "(SELECT json_build_object('opened_until', c.opened_until, 'opened_at', c.opened_at, 'probe_execution', c.probe_execution, " +
  "'probe_until', c.probe_until) FROM agent_circuits c WHERE c.network = agent_listings.network AND c.agent = agent_listings.agent) AS circuit";

export function circuitRow(json: CircuitJson | null): CircuitRow | null {
  if (!json) return null;
  const date = (text: string | null) => (text === null ? null : new Date(text));
  return {
    opened_until: date(json.opened_until),
    opened_at: date(json.opened_at),
    probe_execution: json.probe_execution,
    probe_until: date(json.probe_until),
  };
}

export type CircuitState = "closed" | "open" | "half_open";

/** The circuit as the API shows it on a listing. */
export type CircuitView = {
  state: CircuitState;
  opened_at: string | null;
  /** When an open circuit lets its probe through. */
  retry_at: string | null;
};

export function circuitState(circuit: CircuitRow | null, now_ms = Date.now()): CircuitState {
  if (!circuit?.opened_until) return "closed";
  return circuit.opened_until.getTime() > now_ms ? "open" : "half_open";
}

export function circuitView(circuit: CircuitRow | null): CircuitView {
  const state = circuitState(circuit);
  return {
    state,
    opened_at: state === "closed" ? null : circuit!.opened_at!.toISOString(),
    retry_at: state === "open" ? circuit!.opened_until!.toISOString() : null,
  };
}

export class CircuitBreaker {
  constructor(
    private readonly db: Db,
    readonly config: BreakerConfig,
  ) {}

  /**
   * Claims the half-open circuit's probe for `execution_id`: true if this execution is the one
   * call let through. A probe whose relayer died is given up after PROBE_HOLD_SECS.
   */
  async claimProbe(network: NetworkName, agent: string, execution_id: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE agent_circuits SET probe_execution = $3, probe_until = clock_timestamp() + $4 * interval '1 second'
       WHERE network = $1 AND agent = $2 AND opened_until <= clock_timestamp()
         AND (probe_until IS NULL OR probe_until <= clock_timestamp())`,
      [network, agent, execution_id, PROBE_HOLD_SECS],
    );
    return rowCount === 1;
  }

  /**
   * Counts a refund the creator caused. True when the circuit opened (or opened again, after a
   * failed probe) with it.
   */
  async creatorFailed(network: NetworkName, agent: string, execution_id: string): Promise<boolean> {
    const reopened = await this.db.query(
      `UPDATE agent_circuits SET opened_until = clock_timestamp() + $4 * interval '1 second', opened_at = clock_timestamp(),
         probe_execution = NULL, probe_until = NULL, failures = 0, window_started_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 AND probe_execution = $3`,
      [network, agent, execution_id, this.config.cooloff_secs],
    );
    if (reopened.rowCount === 1) return true;
    // A tumbling window: the count starts again with the first failure after a window has passed.
    const { rows } = await this.db.query<{ failures: number }>(
      `INSERT INTO agent_circuits (network, agent, window_started_at, failures) VALUES ($1, $2, clock_timestamp(), 1)
       ON CONFLICT (network, agent) DO UPDATE SET
         failures = CASE WHEN agent_circuits.window_started_at <= clock_timestamp() - $3 * interval '1 second'
                         THEN 1 ELSE agent_circuits.failures + 1 END,
         window_started_at = CASE WHEN agent_circuits.window_started_at <= clock_timestamp() - $3 * interval '1 second'
                                  THEN clock_timestamp() ELSE agent_circuits.window_started_at END
       RETURNING failures`,
      [network, agent, this.config.window_secs],
    );
    if (rows[0]!.failures < this.config.failures) return false;
    const opened = await this.db.query(
      `UPDATE agent_circuits SET opened_until = clock_timestamp() + $3 * interval '1 second', opened_at = clock_timestamp(),
         failures = 0, window_started_at = clock_timestamp()
       WHERE network = $1 AND agent = $2 AND (opened_until IS NULL OR opened_until <= clock_timestamp())
         AND probe_execution IS NULL`,
      [network, agent, this.config.cooloff_secs],
    );
    return opened.rowCount === 1;
  }

  /**
   * Gives up the probe `execution_id` holds, if it still holds it: it ended without a verdict on
   * the creator (refused before its escrow, or refunded for the relayer's own failure).
   */
  async endProbe(execution_id: string): Promise<void> {
    await this.db.query("UPDATE agent_circuits SET probe_execution = NULL, probe_until = NULL WHERE probe_execution = $1", [
      execution_id,
    ]);
  }

  /** A verified result from the probe closes the circuit; any other result changes nothing. */
  async succeeded(network: NetworkName, agent: string, execution_id: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      "DELETE FROM agent_circuits WHERE network = $1 AND agent = $2 AND probe_execution = $3",
      [network, agent, execution_id],
    );
    return rowCount === 1;
  }
}
