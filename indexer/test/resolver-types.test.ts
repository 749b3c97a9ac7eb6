// The resolvers are typed from the SDL (src/graphql/generated/resolvers.ts, `npm run
// graphql:types`): each field's arguments, its parent (the row a type is mapped to) and its result.
// The `@ts-expect-error` lines are the test that matters: `tsc -p tsconfig.test.json` (run before
// mocha) fails if the generated types stop checking a resolver, because each marked line would then
// compile. The cases below run the typed resolvers the schema is built from.
import { strict as assert } from "node:assert";

import { agentResolvers } from "../src/graphql/agent.js";
import { executionResolvers } from "../src/graphql/execution.js";
import type { AgentResolvers, ExecutionResolvers, QueryResolvers, Resolvers } from "../src/graphql/generated/resolvers.js";
import type { AgentRecord, ExecutionRecord } from "../src/graphql/rows.js";

const typed: Resolvers[] = [
  // @ts-expect-error a state the schema's enum does not have (it is upper case)
  { Execution: { state: () => "settled" } },
  // @ts-expect-error an Agent's fields read the agent's row, not an execution's
  { Agent: { address: (row: ExecutionRecord) => row.payer } },
  // @ts-expect-error Money is an object, not a decimal string
  { Agent: { collateral: () => "100.000000" } },
  // @ts-expect-error `agent(address: String!)` has no `id` argument
  { Query: { agent: (_: unknown, args: { id: string }) => ({ ...agentRow, agent: args.id }) } },
  // @ts-expect-error `Execution.amount` is non-null
  { Execution: { amount: () => null } },
];

const agentRow: AgentRecord = {
  agent: "Agent1111111111111111111111111111111111111",
  agent_id: "1",
  creator: "Creator111111111111111111111111111111111111",
  endpoint: "https://agent.example/execute",
  pricing: null,
  collateral_usdc: "100000000",
  withdrawn_usdc: "0",
  registered_at: "1795700000",
  retired_at: null,
  max_slot: "10",
  commitment: "finalized",
};

const executionRow: ExecutionRecord = {
  id: "exec_1",
  agent: agentRow.agent,
  payer: "Payer11111111111111111111111111111111111111",
  api_key_id: null,
  creator: agentRow.creator,
  state: "refunded",
  refund_reason: "CreatorError",
  amount_usdc: "10000",
  price_per_unit_usdc: "0",
  max_units: "0",
  units: null,
  charged_usdc: "0",
  returned_usdc: "10000",
  creator_share_usdc: "0",
  fee_usdc: "0",
  fee_shard: null,
  used_included_call: null,
  opened_at: "1795700000",
  deadline: "1795700300",
  closed_at: "1795700002",
  open_signature: "open",
  open_slot: "11",
  close_signature: "close",
  close_slot: "14",
  dispute_state: null,
  dispute_opened_at: null,
  dispute_resolved_at: null,
  slashed_usdc: "0",
  activity_at: "1795700000",
  max_slot: "14",
  commitment: "confirmed",
};

/** Calls a field resolver the way graphql-js does, with what the field needs of its arguments. */
function call<P, R>(resolver: unknown, parent: P): R {
  return (resolver as (parent: P, args: object, ctx: object, info: object) => R)(parent, {}, {}, {});
}

describe("resolver types from the SDL", () => {
  it("rejects what the schema does not allow (the @ts-expect-error lines compile only while it does)", () => {
    assert.equal(typed.length, 5);
  });

  it("maps the stored lower-case values to the schema's enums, and times to RFC 3339", async () => {
    const execution: ExecutionResolvers = executionResolvers.Execution;
    assert.equal(call(execution.state, executionRow), "REFUNDED");
    assert.equal(call(execution.refundReason, executionRow), "CREATOR_ERROR");
    assert.equal(call(execution.commitment, executionRow), "CONFIRMED");
    assert.equal(call(execution.openedAt, executionRow), "2026-11-26T13:33:20.000Z");
    assert.equal(call(execution.latencySlots, executionRow), null, "a refunded call has no latency");
    assert.equal(await call(execution.dispute, executionRow), null);
    assert.equal(await call(execution.pricePerUnit, executionRow), null, "a fixed-price call has no price per unit");
    assert.equal(call(execution.maxUnits, executionRow), null);
    assert.equal(call(execution.maxUnits, { ...executionRow, price_per_unit_usdc: "100", max_units: "25" }), "25");
    const agent: AgentResolvers = agentResolvers.Agent;
    assert.equal(call(agent.commitment, agentRow), "FINALIZED");
    assert.equal(call(agent.retiredAt, agentRow), null);
    const query: QueryResolvers = agentResolvers.Query;
    assert.equal(typeof query.agents, "function");
  });
});
