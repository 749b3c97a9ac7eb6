// The execution state machine, every (state, fact) pair against a table written out here by hand:
// a state or a fact added to the module without a decision for each pair fails this test (and
// the type check, as EXPECTED must name every state and every fact).
import { strict as assert } from "node:assert";

import { EXECUTION_STATES, type ExecutionState } from "../src/executions/execution-row.js";
import {
  FACTS,
  INITIAL_STATE,
  nextState,
  transition,
  TransitionRefused,
  TRANSITIONS,
  type Fact,
} from "../src/executions/execution-transitions.js";

const _ = null;

// Rows: the state a row is in. Columns: the fact recorded. Cells: the state it moves to, or _ (refused).
const EXPECTED: Record<ExecutionState, Record<Fact, ExecutionState | null>> = {
  opening: {
    owner_claimed: "opening",
    open_recorded: "opening",
    escrow_opened: "running",
    open_failed: "failed",
    settle_recorded: "settling",
    settle_resigned: _,
    refund_recorded: "refunding",
    refund_resigned: _,
    confirmed_settled: _,
    confirmed_refunded: _,
  },
  running: {
    owner_claimed: _,
    open_recorded: _,
    escrow_opened: _,
    open_failed: _,
    settle_recorded: "settling",
    settle_resigned: _,
    refund_recorded: "refunding",
    refund_resigned: _,
    confirmed_settled: _,
    confirmed_refunded: _,
  },
  settling: {
    owner_claimed: _,
    open_recorded: _,
    escrow_opened: _,
    open_failed: _,
    settle_recorded: "settling",
    settle_resigned: "settling",
    refund_recorded: "refunding",
    refund_resigned: _,
    confirmed_settled: "settled",
    confirmed_refunded: "refunded",
  },
  refunding: {
    owner_claimed: _,
    open_recorded: _,
    escrow_opened: _,
    open_failed: _,
    settle_recorded: _,
    settle_resigned: _,
    refund_recorded: "refunding",
    refund_resigned: "refunding",
    confirmed_settled: "settled",
    confirmed_refunded: "refunded",
  },
  settled: {
    owner_claimed: _,
    open_recorded: _,
    escrow_opened: _,
    open_failed: _,
    settle_recorded: _,
    settle_resigned: _,
    refund_recorded: _,
    refund_resigned: _,
    confirmed_settled: _,
    confirmed_refunded: _,
  },
  refunded: {
    owner_claimed: _,
    open_recorded: _,
    escrow_opened: _,
    open_failed: _,
    settle_recorded: _,
    settle_resigned: _,
    refund_recorded: _,
    refund_resigned: _,
    confirmed_settled: _,
    confirmed_refunded: _,
  },
  failed: {
    owner_claimed: _,
    open_recorded: _,
    escrow_opened: _,
    open_failed: _,
    settle_recorded: _,
    settle_resigned: _,
    refund_recorded: _,
    refund_resigned: _,
    confirmed_settled: _,
    confirmed_refunded: _,
  },
};

describe("execution transitions", () => {
  it("decides every pair of a state and a fact, and no other", () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), [...EXECUTION_STATES].sort());
    for (const state of EXECUTION_STATES) assert.deepEqual(Object.keys(EXPECTED[state]).sort(), [...FACTS].sort(), state);
  });

  it("moves or refuses each pair as the table says", () => {
    for (const state of EXECUTION_STATES) {
      for (const fact of FACTS) {
        const expected = EXPECTED[state][fact];
        assert.equal(nextState(state, fact), expected, `${state} × ${fact}`);
        if (expected === null) {
          assert.throws(
            () => transition(state, fact),
            (error: unknown) => error instanceof TransitionRefused && error.state === state && error.fact === fact,
            `${state} × ${fact}`,
          );
        } else {
          assert.equal(transition(state, fact), expected, `${state} × ${fact}`);
        }
      }
    }
  });

  it("names only known states, each fact with one target", () => {
    for (const fact of FACTS) {
      const move = TRANSITIONS[fact];
      assert.ok(EXECUTION_STATES.includes(move.to), fact);
      assert.ok(move.from.length > 0 && move.from.every((state) => EXECUTION_STATES.includes(state)), fact);
    }
  });

  it("inserts rows in opening, and leaves settled, refunded and failed for good", () => {
    assert.equal(INITIAL_STATE, "opening");
    for (const final of ["settled", "refunded", "failed"] as const) {
      assert.deepEqual(FACTS.filter((fact) => nextState(final, fact) !== null), [], final);
    }
  });

  it("reaches every state from the one rows are inserted in", () => {
    const reached = new Set<ExecutionState>([INITIAL_STATE]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const state of [...reached]) {
        for (const fact of FACTS) {
          const next = nextState(state, fact);
          if (next !== null && !reached.has(next)) {
            reached.add(next);
            grew = true;
          }
        }
      }
    }
    assert.deepEqual([...reached].sort(), [...EXECUTION_STATES].sort());
  });
});
