// The response cache: a repeated query is answered from memory while nothing it read changed,
// and never after such a change: a commit by this process is visible to the very next query, one
// by another process once its notice arrives; a commit about other subjects leaves an answer
// kept; a move of the watermark drops only answers whose finalized flags it changes; the end of
// the hour and the age drop every answer; off at 0.
import { strict as assert } from "node:assert";

import { formatExecutionId, retireAgentInstruction } from "@agent-market/program";
import { silentLogger } from "@agent-market/service";

import { AnswerScope, changedSubjects } from "../src/graphql/answer-scope.js";
import { createIndexer, type Indexer } from "../src/indexer.js";
import type { RawTransaction } from "../src/ingest/decoder.js";
import { activity, decoderOf, quietIndexer, query, rawTransaction, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

/** The statements `indexer` sends to PostgreSQL while `work` runs. */
async function statementsDuring(indexer: Indexer, work: () => Promise<unknown>): Promise<number> {
  const real = indexer.pool.query.bind(indexer.pool);
  let count = 0;
  (indexer.pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
    count += 1;
    return (real as (...a: unknown[]) => unknown)(...args);
  };
  try {
    await work();
  } finally {
    indexer.pool.query = real;
  }
  return count;
}

const MARKET = `{ market { executions spent { usdc } } }`;
const AGENT = `query ($a: String!) { agent(address: $a) { stats(window: H24) { executions settled spent { usdc finalized } } } }`;
const PAYER = `query ($p: String!) { executions(filter: { payer: $p }) { edges { node { id state } } } }`;
/** An execution, and through it its agent's figures: a read of another subject than the one asked. */
const EXECUTION_AND_AGENT = `query ($id: ID!) { execution(id: $id) { state agentDetails { stats(window: H24) { executions } } } }`;
/** An execution's agent's record alone. */
const EXECUTION_AGENT_RECORD = `query ($id: ID!) { execution(id: $id) { agentDetails { retiredAt } } }`;
/** An agent's figures from the rollups alone, without its record. */
const AGENT_USAGE = `query ($a: String!) { usage(dimension: AGENT, subject: $a) { totals(window: H24) { executions } } }`;

/** Until no notice has moved the feed for 200 ms: the commits' own notices are back. */
async function quiet(indexer: Indexer): Promise<void> {
  await waitFor("the notices in", async () => {
    const seen = indexer.feed.generation();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return indexer.feed.generation() === seen;
  });
}

describe("response cache", function () {
  this.timeout(180_000);
  let env: IndexerEnv | undefined;
  const decodeTransaction = (raw: RawTransaction) => decoderOf(env)(raw);

  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  /** An indexer of a schema of its own, answers kept up to a minute, once its change feed listens. */
  const cachingIndexer = async (schema: string) => {
    const indexer = await quietIndexer(env!, { response_cache_ms: 60_000, schema });
    await waitFor("the feed listening", async () => indexer.feed.finalizedSlot() !== null);
    return indexer;
  };
  /** Stores the transactions of `signatures`, as read from the chain at confirmed. */
  const ingest = async (indexer: Indexer, signatures: string[]) =>
    indexer.store.ingest((await Promise.all(signatures.map((s) => rawTransaction(env!.market, s)))).map(decodeTransaction), "confirmed");

  it("answers a repeated query from memory, and a commit of this process is visible to the next query", async () => {
    const indexer = await quietIndexer(env!, { response_cache_ms: 60_000 });
    try {
      const run = await activity(env!.market, { settled: 2, refunded: 0, open: 0 });
      const raws = await Promise.all(run.signatures.map((s) => rawTransaction(env!.market, s)));
      // Everything but the second execution (its open and its settlement), then the second one.
      const second = run.signatures.indexOf(run.settled[1]!.signature);
      const later = raws.slice(second, second + 2);
      await indexer.store.ingest(raws.filter((raw) => !later.includes(raw)).map(decodeTransaction), "confirmed");
      await waitFor("the feed listening", async () => indexer.feed.finalizedSlot() !== null);
      // The commit's own notice comes back from PostgreSQL a moment later and moves the feed again.
      await quiet(indexer);
      const first = await query(indexer, MARKET);
      let again: any;
      assert.equal(await statementsDuring(indexer, async () => (again = await query(indexer, MARKET))), 0);
      assert.deepEqual(again, first);
      await indexer.store.ingest(later.map(decodeTransaction), "confirmed");
      const after = await query(indexer, MARKET);
      assert.equal(after.market.executions, first.market.executions + 1);
    } finally {
      await indexer.close();
    }
  });

  it("sees another process's commit once its notice arrives", async () => {
    const server = await quietIndexer(env!, { response_cache_ms: 60_000, schema: "indexer_cache_shared" });
    const writer = await quietIndexer(env!, { response_cache_ms: 60_000, schema: "indexer_cache_shared" });
    try {
      await waitFor("the feed listening", async () => server.feed.finalizedSlot() !== null);
      const before = await query(server, MARKET);
      const run = await activity(env!.market, { settled: 1, refunded: 0, open: 0 });
      const raws = await Promise.all(run.signatures.map((s) => rawTransaction(env!.market, s)));
      await writer.store.ingest(raws.map(decodeTransaction), "confirmed");
      await waitFor("the other process's commit", async () => (await query(server, MARKET)).market.executions === before.market.executions + 1, 2_000);
    } finally {
      await writer.close();
      await server.close();
    }
  });

  it("computes an answer again past its age, and every time when off", async () => {
    for (const [ms, expectRead] of [
      [50, true],
      [0, true],
    ] as const) {
      const indexer = await quietIndexer(env!, { response_cache_ms: ms });
      try {
        await waitFor("the feed listening", async () => indexer.feed.finalizedSlot() !== null);
        await query(indexer, MARKET);
        if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms + 20));
        assert.equal((await statementsDuring(indexer, () => query(indexer, MARKET))) > 0, expectRead, `cache ${ms} ms`);
      } finally {
        await indexer.close();
      }
    }
  });

  it("keeps an answer across commits about other subjects, and drops it at a commit about its own", async () => {
    const indexer = await cachingIndexer("indexer_cache_subjects");
    try {
      const a = await activity(env!.market, { settled: 1, refunded: 0, open: 0 });
      const b = await activity(env!.market, { settled: 0, refunded: 0, open: 1 });
      await ingest(indexer, [...a.signatures, ...b.signatures]);
      await quiet(indexer);
      const aVars = { a: a.agent.address.toBase58() };
      const payerVars = { p: a.payer.wallet.publicKey.toBase58() };
      const executionVars = { id: formatExecutionId(a.settled[0]!.executionId) };
      const agentBefore = await query(indexer, AGENT, aVars);
      const payerBefore = await query(indexer, PAYER, payerVars);
      const executionBefore = await query(indexer, EXECUTION_AND_AGENT, executionVars);
      const usageBefore = await query(indexer, AGENT_USAGE, aVars);
      assert.equal(agentBefore.agent.stats.executions, 1);

      // B's escrow settles: nothing A, A's payer or A's execution read changed.
      await ingest(indexer, [await env!.market.settle(b.open[0]!, b.agent)]);
      await quiet(indexer);
      assert.equal(await statementsDuring(indexer, () => query(indexer, AGENT, aVars)), 0, "agent A kept");
      assert.equal(await statementsDuring(indexer, () => query(indexer, PAYER, payerVars)), 0, "A's payer kept");
      assert.equal(await statementsDuring(indexer, () => query(indexer, EXECUTION_AND_AGENT, executionVars)), 0, "A's execution kept");
      assert.equal(await statementsDuring(indexer, () => query(indexer, AGENT_USAGE, aVars)), 0, "A's usage kept");

      // A second call of agent A by A's payer: each of the three read something it changed.
      await ingest(indexer, [(await env!.market.openEscrow(a.agent, a.payer)).signature]);
      const agentAfter = await query(indexer, AGENT, aVars);
      assert.equal(agentAfter.agent.stats.executions, agentBefore.agent.stats.executions + 1);
      const payerAfter = await query(indexer, PAYER, payerVars);
      assert.equal(payerAfter.executions.edges.length, payerBefore.executions.edges.length + 1);
      // The execution asked for is unchanged; its agent's figures, read through it, are not.
      const executionAfter = await query(indexer, EXECUTION_AND_AGENT, executionVars);
      assert.equal(executionAfter.execution.state, executionBefore.execution.state);
      assert.equal(executionAfter.execution.agentDetails.stats.executions, executionBefore.execution.agentDetails.stats.executions + 1);
      assert.equal((await query(indexer, AGENT_USAGE, aVars)).usage.totals.executions, usageBefore.usage.totals.executions + 1);

      // B retires: its record changes, none of its executions do; an execution shows it through its agent.
      const retiredVars = { id: formatExecutionId(b.open[0]!.executionId) };
      assert.equal((await query(indexer, EXECUTION_AGENT_RECORD, retiredVars)).execution.agentDetails.retiredAt, null);
      const retire = await env!.market.send([retireAgentInstruction({ programId: env!.market.programId, creator: b.agent.creator.wallet.publicKey, agent: b.agent.address })], [b.agent.creator.wallet]);
      await ingest(indexer, [retire]);
      assert.notEqual((await query(indexer, EXECUTION_AGENT_RECORD, retiredVars)).execution.agentDetails.retiredAt, null);
    } finally {
      await indexer.close();
    }
  });

  it("computes a query that many ask at once a single time", async () => {
    const indexer = await cachingIndexer("indexer_cache_together");
    try {
      const run = await activity(env!.market, { settled: 1, refunded: 0, open: 0 });
      await ingest(indexer, run.signatures);
      const vars = { a: run.agent.address.toBase58() };
      const anotherCall = async () => ingest(indexer, [(await env!.market.openEscrow(run.agent, run.payer)).signature]);
      await query(indexer, AGENT, vars);
      await anotherCall();
      const once = await statementsDuring(indexer, () => query(indexer, AGENT, vars));
      assert.ok(once > 0);
      await anotherCall();
      let answers: any[] = [];
      const together = await statementsDuring(indexer, async () => (answers = await Promise.all(Array.from({ length: 20 }, () => query(indexer, AGENT, vars)))));
      assert.equal(together, once);
      for (const answer of answers) assert.deepEqual(answer, answers[0]);
    } finally {
      await indexer.close();
    }
  });

  it("drops at a move of the watermark only the answers whose finalized flags it changes", async () => {
    const indexer = await cachingIndexer("indexer_cache_watermark");
    try {
      const run = await activity(env!.market, { settled: 1, refunded: 0, open: 0 });
      const raws = await Promise.all(run.signatures.map((s) => rawTransaction(env!.market, s)));
      await indexer.store.ingest(raws.map(decodeTransaction), "confirmed");
      const newest = Math.max(...raws.map((raw) => raw.slot));
      const moveTo = async (slot: number) => {
        await indexer.store.setFinalizedSlot(slot);
        await waitFor(`the watermark at ${slot}`, async () => indexer.feed.finalizedSlot() === slot);
      };
      await moveTo(1);
      await quiet(indexer);
      const vars = { a: run.agent.address.toBase58() };
      const before = await query(indexer, AGENT, vars);
      assert.equal(before.agent.stats.spent.finalized, false);
      const payerVars = { p: run.payer.wallet.publicKey.toBase58() };
      await query(indexer, PAYER, payerVars);
      // Below the settlement's slot: the flag reads the same, the answer is kept.
      await moveTo(2);
      assert.equal(await statementsDuring(indexer, () => query(indexer, AGENT, vars)), 0, "kept below the slot");
      // Past it: the flag changes, the answer is computed again.
      await moveTo(newest);
      const after = await query(indexer, AGENT, vars);
      assert.equal(after.agent.stats.spent.finalized, true);
      // An answer without finalized flags never depends on the watermark.
      assert.equal(await statementsDuring(indexer, () => query(indexer, PAYER, payerVars)), 0, "no flags: kept");
      // Back below it (a late confirmed transaction): the flag changes again.
      await moveTo(1);
      assert.equal((await query(indexer, AGENT, vars)).agent.stats.spent.finalized, false);
    } finally {
      await indexer.close();
    }
  });

  it("computes every answer again once its hour ends, and never keeps one that read the checkpoint", async () => {
    let nowSecs = Math.floor(Date.now() / 1000 / 3600) * 3600 + 1_000;
    const indexer = await createIndexer({ ...env!.config, response_cache_ms: 3_600_000, schema: "indexer_cache_clock" }, { ingest: false, logger: silentLogger, nowSecs: () => nowSecs });
    try {
      await waitFor("the feed listening", async () => indexer.feed.finalizedSlot() !== null);
      await quiet(indexer);
      await query(indexer, MARKET);
      nowSecs += 2_000;
      assert.equal(await statementsDuring(indexer, () => query(indexer, MARKET)), 0, "the same hour");
      nowSecs += 600;
      assert.ok((await statementsDuring(indexer, () => query(indexer, MARKET))) > 0, "the next hour");
      await query(indexer, `{ indexer { latestSlot } }`);
      assert.ok((await statementsDuring(indexer, () => query(indexer, `{ indexer { latestSlot } }`))) > 0, "the checkpoint is read each time");
    } finally {
      await indexer.close();
    }
  });
});

describe("answer scope", () => {
  it("is touched by a notice naming a subject it read, by every notice when it read everything, and by any notice of an older writer", () => {
    const agentPage = new AnswerScope();
    agentPage.read("agent", "A");
    const list = new AnswerScope();
    list.readEverything();
    const other = changedSubjects({ executions: [["exec_1", "P2", "B", false, "key_2", "C2"]], agents: ["B"] });
    const own = changedSubjects({ executions: [["exec_2", "P1", "A", false, null, "C1"]] });
    const watermarkOnly = changedSubjects({ finalizedSlot: 9 });
    assert.equal(agentPage.touchedBy(other), false);
    assert.equal(agentPage.touchedBy(own), true);
    assert.equal(agentPage.touchedBy(watermarkOnly), false);
    assert.equal(list.touchedBy(watermarkOnly), true);
    assert.equal(changedSubjects({ executions: [["exec_3", "P1", "B", false]] }), null);
    assert.equal(agentPage.touchedBy(null), true);
    const creator = new AnswerScope();
    creator.read("creator", "C0");
    assert.equal(creator.touchedBy(changedSubjects({ creators: ["C0"] })), true);
  });

  it("holds while the watermark leaves every judged slot on the same side", () => {
    const scope = new AnswerScope();
    assert.equal(scope.judge(10, 12), true);
    assert.equal(scope.judge(20, 12), false);
    assert.equal(scope.holdsAt(10), true);
    assert.equal(scope.holdsAt(19), true);
    assert.equal(scope.holdsAt(9), false);
    assert.equal(scope.holdsAt(20), false);
  });
});
