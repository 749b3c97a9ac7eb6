// The GraphQL conventions, through yoga.fetch: Relay connections, limits refused with their
// codes, introspection off in production, USDC as decimal strings, the finalized flag.
import { strict as assert } from "node:assert";

import { backfill } from "../src/ingest/backfill.js";
import { settleFinality } from "../src/ingest/finality.js";
import type { Indexer } from "../src/indexer.js";
import { activity, graphql, quietIndexer, query, startEnv, stopEnv, waitFor, type Activity, type IndexerEnv } from "./support.js";

describe("GraphQL", function () {
  this.timeout(180_000);
  let env: IndexerEnv | undefined;
  let indexer: Indexer;
  let run: Activity;

  before(async () => {
    env = await startEnv();
    run = await activity(env.market, { settled: 4, refunded: 1, open: 0 });
    indexer = await quietIndexer(env);
    await backfill(indexer.rpc, indexer.store);
  });
  after(async () => {
    await indexer?.close();
    await stopEnv(env);
  });

  it("pages executions with opaque cursors, newest first, each once", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const data: any = await query(
        indexer,
        `query($agent: String!, $after: String) {
          executions(first: 2, after: $after, filter: { agent: $agent }) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
        }`,
        { agent: run.agent.address.toBase58(), after },
      );
      seen.push(...data.executions.edges.map((edge: any) => edge.node.id));
      if (!data.executions.pageInfo.hasNextPage) break;
      after = data.executions.pageInfo.endCursor;
      assert.doesNotMatch(after!, /exec_/, "cursors are opaque");
    }
    assert.equal(seen.length, 5);
    assert.equal(new Set(seen).size, 5);
  });

  it("refuses first outside 1–100 and a cursor it did not give, with codes", async () => {
    for (const first of [0, 101]) {
      const answer = await graphql(indexer, `query($first: Int) { executions(first: $first) { nodes { id } } }`, { first });
      assert.equal(answer.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
    }
    const answer = await graphql(indexer, `{ executions(after: "not-a-cursor") { nodes { id } } }`);
    assert.equal(answer.errors?.[0]?.extensions?.code, "INVALID_CURSOR");
  });

  it("refuses a query over the cost limit before running it, counting first: $n at n", async () => {
    const costly = `query($n: Int) {
      agents(first: $n) { nodes { executions(first: 100) { nodes { id agentDetails { executions(first: 100) { nodes { id } } } } } } }
    }`;
    const refused = await graphql(indexer, costly, { n: 100 });
    assert.equal(refused.errors?.[0]?.extensions?.code, "QUERY_TOO_COSTLY");
    assert.equal(refused.data, undefined);
    const small = await graphql(indexer, `query($n: Int) { agents(first: $n) { nodes { address } } }`, { n: 5 });
    assert.equal(small.errors, undefined);
  });

  it("refuses too deep a query and too many aliases", async () => {
    const deep = `{ executions(first: 1) { nodes { agentDetails { lastExecution { agentDetails { lastExecution { agentDetails { lastExecution { agentDetails { lastExecution { id } } } } } } } } } } }`;
    assert.equal((await graphql(indexer, deep)).errors?.[0]?.extensions?.code, "QUERY_TOO_DEEP");
    const aliases = `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: indexer { network }`).join(" ")} }`;
    assert.equal((await graphql(indexer, aliases)).errors?.[0]?.extensions?.code, "TOO_MANY_ALIASES");
  });

  it("counts aliases of __typename toward the alias limit", async () => {
    const aliases = `{ ${Array.from({ length: 16 }, (_, i) => `t${i}: __typename`).join(" ")} }`;
    const answer = await graphql(indexer, aliases);
    assert.equal(answer.errors?.[0]?.extensions?.code, "TOO_MANY_ALIASES");
    assert.equal(answer.data, undefined);
  });

  it("refuses a body over its size before parsing it, with or without Content-Length", async () => {
    const big = JSON.stringify({ query: `{ indexer { network } }`, variables: { pad: "x".repeat(70 * 1024) } });
    const post = (body: BodyInit, headers: Record<string, string> = {}) =>
      indexer.yoga.fetch("http://indexer.test/graphql", { method: "POST", headers: { "content-type": "application/json", ...headers }, body, duplex: "half" } as RequestInit);
    for (const response of [
      await post(big),
      // A streamed body carries no Content-Length: it is read only up to the limit.
      await post(new Blob([big]).stream()),
    ]) {
      assert.equal(response.status, 413);
      const answer = (await response.json()) as { errors: { extensions: { code: string; maxBytes: number } }[] };
      assert.equal(answer.errors[0]!.extensions.code, "BODY_TOO_LARGE");
      assert.equal(answer.errors[0]!.extensions.maxBytes, 65_536);
    }
    assert.equal((await post(JSON.stringify({ query: `{ indexer { network } }` }))).status, 200);
  });

  it("stops parsing a document past its token limit: TOO_MANY_TOKENS when it breaks no other limit", async () => {
    // Small in bytes, but thousands of tokens for the parser.
    const tokens = `{ indexer { network ${"__typename ".repeat(3_000)}} }`;
    const answer = await graphql(indexer, tokens);
    assert.deepEqual(answer.errors?.map((error) => [error.message, error.extensions?.code, (error.extensions as { maxTokens?: number } | undefined)?.maxTokens]), [
      ["the document has more than 3000 tokens; at most 3000", "TOO_MANY_TOKENS", 3000],
    ]);
    assert.equal(answer.data, undefined);
  });

  it("answers an alias bomb long enough to stop the parser TOO_MANY_ALIASES, and a nesting bomb QUERY_TOO_DEEP", async () => {
    const aliases = `{ ${Array.from({ length: 2_000 }, (_, i) => `a${i}: __typename`).join(" ")} }`;
    const refused = await graphql(indexer, aliases);
    assert.deepEqual(refused.errors?.map((error) => [error.message, error.extensions?.code]), [
      ["the query has at least 999 aliases; at most 15", "TOO_MANY_ALIASES"],
    ]);
    assert.equal(refused.data, undefined);
    const deep = `{ ${"indexer { ".repeat(2_000)}network${" }".repeat(2_000)} }`;
    const tooDeep = await graphql(indexer, deep);
    assert.equal(tooDeep.errors?.[0]?.extensions?.code, "QUERY_TOO_DEEP");
    // `name: value` in arguments is no alias: a long argument list is only too long.
    const argumentsOnly = `{ executions(filter: { ${Array.from({ length: 1_000 }, (_, i) => `f${i}: "v"`).join(", ")} }) { nodes { id } } }`;
    assert.equal((await graphql(indexer, argumentsOnly)).errors?.[0]?.extensions?.code, "TOO_MANY_TOKENS");
  });

  it("answers the server library's codes for requests refused before the schema (docs/indexer.md)", async () => {
    assert.equal((await graphql(indexer, `{ indexer { network `)).errors?.[0]?.extensions?.code, "GRAPHQL_PARSE_FAILED");
    assert.equal((await graphql(indexer, `{ indexer { noSuchField } }`)).errors?.[0]?.extensions?.code, "GRAPHQL_VALIDATION_FAILED");
    const noQuery = await indexer.yoga.fetch("http://indexer.test/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ variables: {} }) });
    assert.equal(((await noQuery.json()) as any).errors?.[0]?.extensions?.code, "BAD_REQUEST");
    const notJson = await indexer.yoga.fetch("http://indexer.test/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    assert.equal(notJson.status, 400);
    assert.equal(((await notJson.json()) as any).errors?.[0]?.extensions?.code, "BAD_REQUEST");
  });

  it("counts the events it holds exactly", async () => {
    const stored = Number((await indexer.pool.query(`SELECT count(*) AS n FROM ${indexer.config.schema}.events`)).rows[0].n);
    assert.ok(stored > 10, `the run's events: ${stored}`);
    assert.equal((await query(indexer, `{ indexer { events } }`)).indexer.events, stored);
  });

  it("answers introspection in development only", async () => {
    assert.equal((await graphql(indexer, `{ __schema { queryType { name } } }`)).errors, undefined);
    const production = await quietIndexer(env!, { production: true });
    try {
      const answer = await graphql(production, `{ __schema { queryType { name } } }`);
      assert.equal(answer.errors?.[0]?.extensions?.code, "INTROSPECTION_DISABLED");
    } finally {
      await production.close();
    }
  });

  it("writes USDC with 6 decimal places and says when a figure is finalized", async () => {
    const text = `query($agent: String!) { agent(address: $agent) { stats(window: D30) { spent { usdc finalized } } } market { fees { usdc finalized } feeShards { index fees { usdc } } } }`;
    const before = await query(indexer, text, { agent: run.agent.address.toBase58() });
    assert.match(before.agent.stats.spent.usdc, /^\d+\.\d{6}$/);
    assert.equal(before.agent.stats.spent.usdc, "1.000000", "4 settled × 0.25 USDC");
    assert.equal(before.agent.stats.spent.finalized, false);
    // settle alternates shards 0 and 1
    const shards = before.market.feeShards.filter((shard: any) => shard.fees.usdc !== "0.000000").map((shard: any) => shard.index);
    assert.deepEqual(shards, [0, 1]);
    await waitFor("finalization", async () => {
      await settleFinality(indexer.rpc, indexer.store);
      const after = await query(indexer, text, { agent: run.agent.address.toBase58() });
      return after.agent.stats.spent.finalized && after.market.fees.finalized;
    });
    const status = await query(indexer, `{ indexer { network finalizedSlot latestSlot } }`);
    assert.equal(status.indexer.network, "devnet");
    assert.ok(status.indexer.finalizedSlot >= status.indexer.latestSlot);
  });

  it("answers the dashboard's queries with a few statements each, however many agents and windows", async () => {
    // Two more agents with an execution each: a list of three must cost what a list of one does.
    const market = env!.market;
    for (let i = 0; i < 2; i++) {
      const agent = await market.agent();
      const escrow = await market.openEscrow(agent, run.payer);
      await market.settle(escrow, agent);
    }
    await backfill(indexer.rpc, indexer.store);
    const statements: string[] = [];
    const real = indexer.pool.query.bind(indexer.pool);
    indexer.pool.query = ((...args: Parameters<typeof real>) => {
      const text = args[0] as string | { text: string };
      statements.push(typeof text === "string" ? text : text.text);
      return real(...args);
    }) as typeof indexer.pool.query;
    const count = async (text: string, variables: Record<string, unknown> = {}) => {
      statements.length = 0;
      await query(indexer, text, variables);
      return statements.length;
    };
    try {
      const agent = run.agent.address.toBase58();
      assert.equal(await count(`{ agents(first: 20) { nodes { address status stats(window: H24) { successRate executions spent { usdc finalized } } } } }`), 2);
      assert.equal(
        await count(
          `query($a: String!) { agent(address: $a) {
            status collateral { usdc finalized }
            uptime { window executions successRate latencySlots { p50 p95 } latencySeconds { p50 p95 } spent { usdc } }
            daily { day executions status } lastExecution { id } } }`,
          { a: agent },
        ),
        4,
      );
      assert.equal(
        await count(
          `query($p: String!) { usage(dimension: PAYER, subject: $p) { totals(window: D30) { executions spent { usdc finalized } } buckets(granularity: HOUR) { start executions } lastExecution { id } } }`,
          { p: run.payer.wallet.publicKey.toBase58() },
        ),
        3,
      );
      assert.equal(await count(`query($p: String!) { executions(first: 20, filter: { payer: $p }) { nodes { id amount { usdc finalized } } } }`, { p: run.payer.wallet.publicKey.toBase58() }), 1);
      assert.equal(await count(`{ indexer { network finalizedSlot events } }`), 1);
    } finally {
      indexer.pool.query = real;
    }
  });

  it("answers a query run again (compiled from its second run) as it answered its first", async () => {
    // No response cache: every run executes, the first through graphql-js, the later ones compiled.
    const uncached = await quietIndexer(env!, { response_cache_ms: 0 });
    try {
      const text = `query($agent: String!) { agent(address: $agent) {
        address status uptime { window executions successRate latencySeconds { p50 p95 } }
        daily { day executions status }
        stats(window: D30) { executions successRate behind(outcome: AGAINST_CREATOR) { nodes { id refundReason amount { usdc finalized } closeTransaction { signature } } } }
        executions(first: 5) { edges { cursor node { id state amount { usdc finalized } } } pageInfo { hasNextPage endCursor } }
      } }`;
      const variables = { agent: run.agent.address.toBase58() };
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await graphql(uncached, text, variables));
      assert.equal(answers[0]!.status, 200);
      assert.equal(answers[0]!.errors, undefined, JSON.stringify(answers[0]!.errors));
      assert.equal((answers[0]!.data as any).agent.executions.edges.length, 5);
      assert.deepEqual(answers[1], answers[0]);
      assert.deepEqual(answers[2], answers[0]);
      // An error answers the same too: a variable of the wrong type, first and then compiled.
      const wrong = [];
      for (let i = 0; i < 3; i++) wrong.push(await graphql(uncached, text, { agent: 5 }));
      assert.deepEqual(wrong[1], wrong[0]);
      assert.deepEqual(wrong[2], wrong[0]);
    } finally {
      await uncached.close();
    }
  });

  it("shows status, uptime windows, the 90-day chart and the executions behind a figure", async () => {
    const data = await query(
      indexer,
      `query($agent: String!) { agent(address: $agent) {
        status uptime { window executions successRate latencySeconds { p50 p95 } }
        daily { day executions status }
        stats(window: H1) { behind(outcome: AGAINST_CREATOR) { nodes { id refundReason closeTransaction { signature } } } }
        lastExecution { id }
      } }`,
      { agent: run.agent.address.toBase58() },
    );
    // 4 settled, 1 creator error: 80 %, DEGRADED's floor.
    assert.equal(data.agent.status, "DEGRADED");
    assert.deepEqual(
      data.agent.uptime.map((w: any) => [w.window, w.executions, w.successRate]),
      [
        ["H1", 5, 0.8],
        ["H24", 5, 0.8],
        ["D7", 5, 0.8],
        ["D30", 5, 0.8],
      ],
    );
    assert.equal(data.agent.daily.length, 90);
    assert.deepEqual(data.agent.daily.at(-1), { day: new Date().toISOString().slice(0, 10), executions: 5, status: "DEGRADED" });
    assert.equal(data.agent.daily[0].status, "NO_DATA");
    const behind = data.agent.stats.behind.nodes;
    assert.equal(behind.length, 1);
    assert.equal(behind[0].id, `exec_${(await import("@coral-xyz/anchor")).utils.bytes.bs58.encode(run.refunded[0]!.executionId)}`);
    assert.equal(behind[0].refundReason, "CREATOR_ERROR");
    assert.ok(data.agent.lastExecution.id);
  });
});
