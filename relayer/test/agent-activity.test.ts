import { strict as assert } from "node:assert";

import { AgentActivity, GATHER_MIN_RUNNING } from "../src/executions/agent-activity.js";
import { ExecutionRunner, type RunOptions } from "../src/executions/execution-run.js";
import type { OpenBatches } from "../src/executions/open-batches.js";
import { batcherOptions } from "../src/executions/transactions.js";

/** A runner that is only asked questions: nothing it would talk to is there. */
function runner(options: Partial<RunOptions>): ExecutionRunner {
  const absent = {} as never;
  return new ExecutionRunner(absent, absent, {}, absent, absent, absent, { ...(absent as RunOptions), ...options });
}

describe("AgentActivity", () => {
  it("counts the runs in progress per agent, and forgets an agent with none", () => {
    const activity = new AgentActivity();
    const key = AgentActivity.key("devnet", "agentA");
    activity.enter(key);
    activity.enter(key);
    activity.enter(AgentActivity.key("devnet", "agentB"));
    assert.equal(activity.count(key), 2);
    activity.leave(key);
    activity.leave(key);
    assert.equal(activity.count(key), 0);
    assert.equal(activity.count(AgentActivity.key("devnet", "agentB")), 1);
    activity.leave(key);
    assert.equal(activity.count(key), 0, "never below none");
  });

  it("lets a batcher gather only with enough of the agent's calls in progress", () => {
    const activity = new AgentActivity();
    const key = AgentActivity.key("devnet", "agentA");
    const options = batcherOptions(12, { gather_ms: 60, activity });
    assert.equal(options.gather_ms, 60);
    for (let i = 0; i < GATHER_MIN_RUNNING - 1; i++) activity.enter(key);
    assert.equal(options.gather_if!(key), false, "a few callers never wait");
    activity.enter(key);
    assert.equal(options.gather_if!(key), true);
    assert.equal(options.gather_if!(AgentActivity.key("devnet", "agentB")), false, "per agent");
    assert.equal(batcherOptions(12, { gather_ms: 60 }).gather_if, undefined, "without activity, whenever the last batch was shared");
  });

  it("a busy agent's new sync executions sign no open_escrow of their own when opens are batched", () => {
    const activity = new AgentActivity();
    const key = AgentActivity.key("devnet", "agentA");
    const batched = runner({ activity, open_batches: {} as OpenBatches });
    const alone = runner({ activity });
    for (let i = 0; i < GATHER_MIN_RUNNING - 1; i++) activity.enter(key);
    assert.equal(batched.signsOwnOpen("devnet", "agentA"), true, "a few callers: each may go alone, its open signed ahead");
    activity.enter(key);
    assert.equal(batched.signsOwnOpen("devnet", "agentA"), false, "busy: its batch signs the open");
    assert.equal(batched.signsOwnOpen("devnet", "agentB"), true, "per agent");
    assert.equal(alone.signsOwnOpen("devnet", "agentA"), true, "opens one by one always send their own");
  });
});
