// The agents' circuit breaker on a real PostgreSQL, as several relayers share it: two pools stand
// for two relayer processes.
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { CircuitBreaker, circuitState } from "../src/listings/circuit-breaker.js";
import { twoRelayerProcesses } from "./support.js";

describe("circuit breaker shared through PostgreSQL", () => {
  const processes = twoRelayerProcesses();

  const id = () => `exec_${randomBytes(8).toString("hex")}`;

  it("opens at the threshold within the window, one probe at a time once half-open, closed by a probe's success", async () => {
    const breaker = new CircuitBreaker(processes.db, { failures: 3, window_secs: 60, cooloff_secs: 60 });
    const elsewhere = new CircuitBreaker(processes.other, breaker.config);
    const read = async () =>
      (
        await processes.db.query<{ opened_until: Date | null; opened_at: Date | null; probe_execution: string | null; probe_until: Date | null }>(
          "SELECT opened_until, opened_at, probe_execution, probe_until FROM agent_circuits WHERE network = 'devnet' AND agent = 'agentC'",
        )
      ).rows[0] ?? null;
    assert.equal(await breaker.creatorFailed("devnet", "agentC", id()), false);
    assert.equal(await elsewhere.creatorFailed("devnet", "agentC", id()), false);
    assert.equal(circuitState(await read()), "closed");
    assert.equal(await breaker.creatorFailed("devnet", "agentC", id()), true, "the third failure, counted across processes, opens it");
    assert.equal(circuitState(await read()), "open");
    assert.equal(await breaker.claimProbe("devnet", "agentC", id()), false, "no probe while open");

    // The cool-off ends.
    await processes.db.query("UPDATE agent_circuits SET opened_until = clock_timestamp() WHERE agent = 'agentC'");
    assert.equal(circuitState(await read()), "half_open");
    const probe = id();
    const [mine, theirs] = await Promise.all([breaker.claimProbe("devnet", "agentC", probe), elsewhere.claimProbe("devnet", "agentC", id())]);
    assert.equal(Number(mine) + Number(theirs), 1, "exactly one probe");
    const holder = (await read())!.probe_execution!;
    // A probe that ends without a verdict (refused before its escrow) gives the probe back.
    await breaker.endProbe(holder);
    assert.equal((await read())!.probe_execution, null);
    assert.equal(await breaker.claimProbe("devnet", "agentC", probe), true);
    assert.equal(await breaker.succeeded("devnet", "agentC", id()), false, "only the probe's success closes it");
    assert.equal(await breaker.succeeded("devnet", "agentC", probe), true);
    assert.equal(await read(), null, "closed");
  });

  it("a failed probe opens it again; failures older than the window start a new count", async () => {
    const breaker = new CircuitBreaker(processes.db, { failures: 2, window_secs: 60, cooloff_secs: 60 });
    await breaker.creatorFailed("devnet", "agentD", id());
    await processes.db.query("UPDATE agent_circuits SET window_started_at = clock_timestamp() - interval '61 seconds' WHERE agent = 'agentD'");
    assert.equal(await breaker.creatorFailed("devnet", "agentD", id()), false, "the old window's failure no longer counts");
    assert.equal(await breaker.creatorFailed("devnet", "agentD", id()), true);
    await processes.db.query("UPDATE agent_circuits SET opened_until = clock_timestamp() WHERE agent = 'agentD'");
    const probe = id();
    assert.equal(await breaker.claimProbe("devnet", "agentD", probe), true);
    assert.equal(await breaker.creatorFailed("devnet", "agentD", probe), true, "the failed probe opens it again");
    const { rows } = await processes.db.query<{ open: boolean; probe_execution: string | null }>(
      "SELECT opened_until > clock_timestamp() + interval '50 seconds' AS open, probe_execution FROM agent_circuits WHERE agent = 'agentD'",
    );
    assert.deepEqual(rows, [{ open: true, probe_execution: null }]);
  });
});
