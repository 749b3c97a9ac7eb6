// The running writer: the live subscription, the scheduled gap check, and one writer per network.
import { strict as assert } from "node:assert";

import { formatExecutionId } from "@agent-market/program";
import { silentLogger } from "@agent-market/service";

import type { IndexerConfig } from "../src/config.js";
import { createIndexer, type Indexer } from "../src/indexer.js";
import { query, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

describe("sources", function () {
  this.timeout(120_000);
  let env: IndexerEnv | undefined;
  const running: Indexer[] = [];

  before(async () => {
    env = await startEnv();
  });
  after(async () => {
    for (const indexer of running) await indexer.close();
    await stopEnv(env);
  });

  async function start(overrides: Partial<IndexerConfig> = {}): Promise<Indexer> {
    const indexer = await createIndexer({ ...env!.config, ...overrides }, { logger: silentLogger });
    running.push(indexer);
    return indexer;
  }

  const executionVisible = (indexer: Indexer, id: string) => async () =>
    (await query(indexer, `query($id: ID!) { execution(id: $id) { state } }`, { id })).execution?.state === "SETTLED";

  it("the live subscription makes a settled execution visible, and only one indexer writes a network", async () => {
    const writer = await start({ gap_check_interval_ms: 3_600_000 });
    await waitFor("the writer's lock", async () => writer.writer.isWriter);
    const second = await start({ gap_check_interval_ms: 3_600_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(second.writer.isWriter, false, "the second indexer of the network only serves");

    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(10_000_000n);
    const escrow = await market.openEscrow(agent, payer);
    await market.settle(escrow, agent);
    const id = formatExecutionId(escrow.executionId);
    await waitFor("the live source", executionVisible(writer, id), 15_000);
    // The reader sees the same database.
    assert.ok(await executionVisible(second, id)());

    await writer.close();
    running.splice(running.indexOf(writer), 1);
    await waitFor("the second indexer to take over", async () => second.writer.isWriter, 15_000);
  });

  it("the gap check finds what no live delivery brought", async () => {
    for (const indexer of running.splice(0)) await indexer.close();
    const indexer = await start({ live: false, gap_check_interval_ms: 300, schema: "indexer_gap_check" });
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(10_000_000n);
    const escrow = await market.openEscrow(agent, payer);
    await market.settle(escrow, agent);
    await waitFor("the gap check", executionVisible(indexer, formatExecutionId(escrow.executionId)), 15_000);
  });
});
