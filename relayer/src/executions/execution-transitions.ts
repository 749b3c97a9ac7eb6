// The execution state machine as data: for each fact the relayer records on a row, the states it
// may be recorded in and the state it leaves. The store (execution-store.ts) asks it before every
// write that moves a row, and its statements take their states from it, so a move the machine
// does not draw is refused in this process rather than written. Which state a row is really in
// is still the database's to say: each statement keeps its `WHERE state = …` guard, the one thing
// that keeps two instances from both moving a row. docs/architecture.md draws this table.
import type { ExecutionState } from "./execution-row.js";

/** The state a row is inserted in: its escrow not open yet, its reservation on the key made. */
export const INITIAL_STATE = "opening" satisfies ExecutionState;

export interface Transition {
  /** The states the fact may be recorded in. */
  from: readonly ExecutionState[];
  to: ExecutionState;
}

/**
 * Every fact that moves a row, or rewrites it in its state. Bookkeeping of a settled row's
 * receipt (the closer's columns) is no fact here: it neither reads nor moves the state.
 */
export const TRANSITIONS = {
  /** An async execution's job takes over a row no run has signed an open for. */
  owner_claimed: { from: ["opening"], to: "opening" },
  /** An open_escrow is recorded before it is sent: the row's own, or a batch's in place of it. */
  open_recorded: { from: ["opening"], to: "opening" },
  /** The escrow is open and its facts recorded; the creator is called next (async: its caller polls). */
  escrow_opened: { from: ["opening"], to: "running" },
  /** open_escrow was refused, or expired unlanded: nothing charged. */
  open_failed: { from: ["opening"], to: "failed" },
  /**
   * A verified result and its settle, recorded before the send: a sync call's straight from
   * `opening`, and a refused batch's settlements again each alone.
   */
  settle_recorded: { from: ["opening", "running", "settling"], to: "settling" },
  /** A settle that expired unlanded, signed anew while the escrow's deadline allows. */
  settle_resigned: { from: ["settling"], to: "settling" },
  /**
   * A refund recorded before the send: a failed or missing result, a run that stopped, a settle
   * the program refused or that can no longer land, and a refused batch's refunds again each alone.
   */
  refund_recorded: { from: ["opening", "running", "settling", "refunding"], to: "refunding" },
  /** A refund that expired unlanded, signed anew. */
  refund_resigned: { from: ["refunding"], to: "refunding" },
  /**
   * The escrow is closed by a settle: its transaction confirmed, or a receipt found on chain (a
   * settle that landed after all, though a refund was under way).
   */
  confirmed_settled: { from: ["settling", "refunding"], to: "settled" },
  /** The escrow is closed without a settle: its refund confirmed, or reclaimed by its payer. */
  confirmed_refunded: { from: ["settling", "refunding"], to: "refunded" },
} as const satisfies Record<string, Transition>;

export type Fact = keyof typeof TRANSITIONS;

export const FACTS = Object.keys(TRANSITIONS) as Fact[];

/** A move the table does not draw: a row in `state` cannot take `fact`. */
export class TransitionRefused extends Error {
  constructor(
    readonly state: ExecutionState,
    readonly fact: Fact,
  ) {
    super(`an execution in ${state} cannot take ${fact}`);
    this.name = "TransitionRefused";
  }
}

/** The state `fact` moves a row in `state` to; null if the table does not allow it. */
export function nextState(state: ExecutionState, fact: Fact): ExecutionState | null {
  const move: Transition = TRANSITIONS[fact];
  return move.from.includes(state) ? move.to : null;
}

/** The state `fact` moves a row in `state` to; throws TransitionRefused if the table does not allow it. */
export function transition(state: ExecutionState, fact: Fact): ExecutionState {
  const next = nextState(state, fact);
  if (next === null) throw new TransitionRefused(state, fact);
  return next;
}
