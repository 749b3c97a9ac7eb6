// Subscriptions over server-sent events, through yoga.fetch with `Accept: text/event-stream`,
// driven by a running indexer ingesting from localnet: an agent's status and figures as its
// executions are ingested, its status changes, and an execution's state and commitment, up to its
// removal when the chain drops its transaction.
import { strict as assert } from "node:assert";

import { formatExecutionId } from "@agent-market/program";
import { silentLogger } from "@agent-market/service";

import { CHANGE_FEED_APPLICATION } from "../src/change-feed.js";
import { createIndexer, type Indexer } from "../src/indexer.js";
import { query, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

/** One subscription's stream of `next` events. */
class EventStream {
  private readonly abort = new AbortController();
  private buffer = "";
  private reader!: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  static async open(indexer: Indexer, query: string, variables: Record<string, unknown>): Promise<EventStream> {
    const stream = new EventStream();
    const response = await indexer.yoga.fetch("http://indexer.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query, variables }),
      signal: stream.abort.signal,
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
    stream.reader = response.body!.getReader();
    return stream;
  }

  /** The data of the next `next` event. */
  async next(timeoutMs = 30_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const lines = block.split("\n");
        if (!lines.includes("event: next")) continue;
        const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
        return JSON.parse(data.join("\n"));
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no event in time");
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("no event in time")), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) throw new Error("the stream ended");
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** Events until one satisfies `done`; answers that one. */
  async until(done: (data: any) => boolean, timeoutMs = 60_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const data = await this.next(Math.max(1, deadline - Date.now()));
      if (done(data)) return data;
    }
  }

  /** As a client going away: the stream is cancelled (which ends the subscription) and the request aborted. */
  close(): void {
    void this.reader.cancel().catch(() => {});
    this.abort.abort();
  }
}

describe("subscriptions over server-sent events", function () {
  this.timeout(180_000);
  let env: IndexerEnv | undefined;
  let indexer: Indexer | undefined;

  // Slots slow enough to drop a transaction before the chain finalizes it (32 slots, 6.4 s), fast
  // enough that its blockhash expires (150 blocks, 30 s), which the indexer waits for to remove it.
  before(async () => {
    env = await startEnv({ slotMs: 200 });
    indexer = await createIndexer(env.config, { logger: silentLogger });
  });
  after(async () => {
    await indexer?.close();
    await stopEnv(env);
  });

  it("follows an agent's status and figures, and its executions to finalized or removed, as they are ingested", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const address = agent.address.toBase58();
    const updates = await EventStream.open(indexer!, `subscription($a: String!) { agentUpdated(address: $a) { address status stats(window: H24) { executions settled open } } }`, {
      a: address,
    });
    const statuses = await EventStream.open(indexer!, `subscription($a: String!) { agentStatusChanged(address: $a) { status } }`, { a: address });
    const executions = await EventStream.open(
      indexer!,
      `subscription($p: String!) { executionUpdated(payer: $p) { id removed execution { state commitment } } }`,
      { p: payer.wallet.publicKey.toBase58() },
    );
    try {
      // A settled execution: the agent's figures, its status, and the execution's state.
      const settled = await market.openEscrow(agent, payer);
      await market.settle(settled, agent);
      const settledId = formatExecutionId(settled.executionId);
      const figures = await updates.until((data) => data.data.agentUpdated.stats.settled === 1);
      assert.deepEqual(figures.data.agentUpdated, { address, status: "OPERATIONAL", stats: { executions: 1, settled: 1, open: 0 } });
      assert.deepEqual((await statuses.next()).data.agentStatusChanged, { status: "OPERATIONAL" });
      const settledUpdate = await executions.until((data) => data.data.executionUpdated.id === settledId && data.data.executionUpdated.execution?.state === "SETTLED");
      assert.deepEqual(settledUpdate.data.executionUpdated, { id: settledId, removed: false, execution: { state: "SETTLED", commitment: "CONFIRMED" } });

      // A refund against the creator: 1 of 2 succeeded, the status goes down.
      const refunded = await market.openEscrow(agent, payer);
      await market.sendAsRelayer([market.refundInstruction(refunded, "CreatorError")]);
      assert.deepEqual((await statuses.next()).data.agentStatusChanged, { status: "DOWN" });

      // An open escrow the chain then drops: the execution appears, then is removed.
      const dropped = await market.openEscrow(agent, payer);
      const droppedId = formatExecutionId(dropped.executionId);
      const opened = await executions.until((data) => data.data.executionUpdated.id === droppedId);
      assert.deepEqual(opened.data.executionUpdated, { id: droppedId, removed: false, execution: { state: "OPEN", commitment: "CONFIRMED" } });
      await updates.until((data) => data.data.agentUpdated.stats.open === 1);
      await market.localnet.call("localnet_dropTransaction", [dropped.signature]);
      // Meanwhile the chain finalizes the settled execution: its commitment changes.
      let finalized: unknown = null;
      const removed = await executions.until((data) => {
        const update = data.data.executionUpdated;
        if (update.id === settledId && update.execution?.commitment === "FINALIZED") finalized = update.execution;
        return update.id === droppedId && update.removed;
      }, 120_000);
      assert.deepEqual(removed.data.executionUpdated, { id: droppedId, removed: true, execution: null });
      const corrected = await updates.until((data) => data.data.agentUpdated.stats.open === 0);
      assert.deepEqual(corrected.data.agentUpdated.stats, { executions: 2, settled: 1, open: 0 });
      finalized ??= (await executions.until((data) => data.data.executionUpdated.id === settledId && data.data.executionUpdated.execution?.commitment === "FINALIZED")).data.executionUpdated.execution;
      assert.deepEqual(finalized, { state: "SETTLED", commitment: "FINALIZED" });
    } finally {
      updates.close();
      statuses.close();
      executions.close();
    }
  });

  it("follows one execution by id and sends nothing about others", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const other = await market.openEscrow(agent, payer);
    const escrow = await market.openEscrow(agent, payer);
    const id = formatExecutionId(escrow.executionId);
    await waitFor("the open escrow indexed", async () => (await query(indexer!, `query($id: ID!) { execution(id: $id) { id } }`, { id })).execution);
    const stream = await EventStream.open(indexer!, `subscription($id: ID!) { executionUpdated(id: $id) { id execution { state } } }`, { id });
    try {
      await market.settle(other, agent);
      await market.settle(escrow, agent);
      const first = await stream.next();
      assert.deepEqual(first.data.executionUpdated, { id, execution: { state: "SETTLED" } });
    } finally {
      stream.close();
    }
  });

  it("listens again after losing its connection, and has agent subscribers re-read what they may have missed", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const address = agent.address.toBase58();
    await waitFor("the agent indexed", async () => (await query(indexer!, `query($a: String!) { agent(address: $a) { address } }`, { a: address })).agent);
    const updates = await EventStream.open(indexer!, `subscription($a: String!) { agentUpdated(address: $a) { stats(window: H24) { executions } } }`, { a: address });
    try {
      const killed = await indexer!.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
        [CHANGE_FEED_APPLICATION],
      );
      assert.equal(killed.rowCount, 1);
      // Woken once listening again, with nothing new.
      assert.deepEqual((await updates.next()).data.agentUpdated, { stats: { executions: 0 } });
      const escrow = await market.openEscrow(agent, payer);
      await market.settle(escrow, agent);
      await updates.until((data) => data.data.agentUpdated.stats.executions === 1);
    } finally {
      updates.close();
    }
  });

  /** The whole SSE answer of a subscription refused before it starts: its `next` events' data. */
  async function refusedSubscription(target: Indexer, text: string, variables: Record<string, unknown> = {}, client = "192.0.2.1"): Promise<any[]> {
    const response = await target.yoga.fetch(
      "http://indexer.test/graphql",
      { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify({ query: text, variables }) },
      { req: { socket: { remoteAddress: client } } },
    );
    const body = await response.text();
    return body
      .split("\n\n")
      .filter((block) => block.split("\n").includes("event: next"))
      .map((block) => JSON.parse(block.split("\n").find((line) => line.startsWith("data: "))!.slice(6)));
  }

  it("applies the query limits to subscriptions: depth, aliases (__typename too) and cost", async () => {
    const address = (await env!.market.agent()).address.toBase58();
    const deep = `subscription($a: String!) { agentUpdated(address: $a) { lastExecution { agentDetails { lastExecution { agentDetails { lastExecution { agentDetails { lastExecution { agentDetails { lastExecution { id } } } } } } } } } } }`;
    const aliases = `subscription($a: String!) { agentUpdated(address: $a) { ${Array.from({ length: 16 }, (_, i) => `t${i}: __typename`).join(" ")} } }`;
    const costly = `subscription($a: String!) { agentUpdated(address: $a) { executions(first: 100) { nodes { agentDetails { executions(first: 100) { nodes { id } } } } } } }`;
    for (const [text, code] of [
      [deep, "QUERY_TOO_DEEP"],
      [aliases, "TOO_MANY_ALIASES"],
      [costly, "QUERY_TOO_COSTLY"],
    ] as const) {
      const events = await refusedSubscription(indexer!, text, { a: address });
      assert.equal(events.length, 1, text);
      assert.equal(events[0].errors?.[0]?.extensions?.code, code);
      assert.equal(events[0].data, undefined);
    }
    assert.equal(indexer!.subscriptions.count(), 0);
  });

  it("bounds open subscriptions per client address and in all, and frees a slot when one closes", async () => {
    const bounded = await createIndexer({ ...env!.config, max_subscriptions: 3, max_subscriptions_per_client: 2 }, { logger: silentLogger, ingest: false });
    const address = (await env!.market.agent()).address.toBase58();
    const text = `subscription($a: String!) { agentUpdated(address: $a) { address } }`;
    const open = async (client: string) => {
      const abort = new AbortController();
      const response = await bounded.yoga.fetch(
        "http://indexer.test/graphql",
        { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify({ query: text, variables: { a: address } }), signal: abort.signal },
        { req: { socket: { remoteAddress: client } } },
      );
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      // The first ping, as a socket would take it: the server then starts the stream.
      await reader.read();
      return () => {
        void reader.cancel().catch(() => {});
        abort.abort();
      };
    };
    const closers: (() => void)[] = [];
    try {
      closers.push(await open("198.51.100.1"), await open("198.51.100.1"));
      await waitFor("two open", async () => bounded.subscriptions.count("198.51.100.1") === 2);
      const third = await refusedSubscription(bounded, text, { a: address }, "198.51.100.1");
      assert.equal(third[0].errors?.[0]?.extensions?.code, "TOO_MANY_SUBSCRIPTIONS");
      assert.equal(third[0].errors?.[0]?.extensions?.scope, "client");
      closers.push(await open("198.51.100.2"));
      await waitFor("three open", async () => bounded.subscriptions.count() === 3);
      const full = await refusedSubscription(bounded, text, { a: address }, "198.51.100.3");
      assert.equal(full[0].errors?.[0]?.extensions?.code, "TOO_MANY_SUBSCRIPTIONS");
      assert.equal(full[0].errors?.[0]?.extensions?.scope, "server");
      closers.shift()!();
      await waitFor("a slot freed", async () => bounded.subscriptions.count() === 2);
      closers.push(await open("198.51.100.3"));
      await waitFor("taken again", async () => bounded.subscriptions.count() === 3);
    } finally {
      closers.forEach((close) => close());
      await bounded.close();
    }
  });

  it("reads once per change for every subscriber that asked the same thing", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const address = agent.address.toBase58();
    const text = `subscription($a: String!) { agentUpdated(address: $a) { address status stats(window: H24) { executions settled } } }`;
    const streams = await Promise.all(Array.from({ length: 10 }, () => EventStream.open(indexer!, text, { a: address })));
    const real = indexer!.pool.query.bind(indexer!.pool);
    // The agent loader's statement: what each subscriber's answer starts with.
    let reads = 0;
    (indexer!.pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: string };
      const text = typeof first === "string" ? first : (first.text ?? "");
      if (/\.agents WHERE agent = ANY/.test(text)) reads += 1;
      return (real as (...a: unknown[]) => unknown)(...args);
    };
    try {
      const escrow = await market.openEscrow(agent, payer);
      await market.settle(escrow, agent);
      await Promise.all(streams.map((stream) => stream.until((data) => data.data?.agentUpdated?.stats?.settled === 1)));
      // Unshared, each of the ten would read the agent once per change (open, settle: 20 and more);
      // shared, one read serves them all for each change.
      assert.ok(reads >= 1 && reads <= 4, `agent reads for ten subscribers: ${reads}`);
    } finally {
      indexer!.pool.query = real;
      streams.forEach((stream) => stream.close());
    }
  });

  it("follows every agent of a list on one stream, each change sent as the agent that changed", async () => {
    const market = env!.market;
    const [first, second] = [await market.agent(), await market.agent()];
    const payer = await market.payer(100_000_000n);
    const addresses = [first.address.toBase58(), second.address.toBase58()];
    const stream = await EventStream.open(indexer!, `subscription($a: [String!]!) { agentsUpdated(addresses: $a) { address stats(window: H24) { settled } } }`, { a: addresses });
    try {
      await market.settle(await market.openEscrow(second, payer), second);
      const secondSettled = await stream.until((data) => data.data.agentsUpdated?.stats.settled === 1);
      assert.equal(secondSettled.data.agentsUpdated.address, addresses[1]);
      await market.settle(await market.openEscrow(first, payer), first);
      const firstSettled = await stream.until((data) => data.data.agentsUpdated?.address === addresses[0] && data.data.agentsUpdated.stats.settled === 1);
      assert.deepEqual(firstSettled.data.agentsUpdated, { address: addresses[0], stats: { settled: 1 } });
    } finally {
      stream.close();
    }
  });

  it("refuses agentsUpdated with no address or more than 100, with its code", async () => {
    const address = (await env!.market.agent()).address.toBase58();
    const text = `subscription($a: [String!]!) { agentsUpdated(addresses: $a) { address } }`;
    for (const [addresses, count] of [
      [[], 0],
      [Array.from({ length: 101 }, (_, i) => `${address.slice(0, -3)}${String(i).padStart(3, "0")}`), 101],
    ] as const) {
      const stream = await EventStream.open(indexer!, text, { a: addresses });
      try {
        const answer = await stream.next();
        assert.equal(answer.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
        assert.equal(answer.errors?.[0]?.message, `agentsUpdated follows 1 to 100 agents, not ${count}`);
      } finally {
        stream.close();
      }
    }
  });

  it("refuses executionUpdated without an id or a payer, with its code", async () => {
    const stream = await EventStream.open(indexer!, `subscription { executionUpdated { id } }`, {});
    try {
      const answer = await stream.next();
      assert.equal(answer.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
      assert.equal(answer.errors?.[0]?.message, "executionUpdated needs an id or a payer");
    } finally {
      stream.close();
    }
  });
});
