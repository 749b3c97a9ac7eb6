// Streamed executions through the relayer: with `Accept: text/event-stream` the caller reads the
// creator's chunks as they arrive, between the execution (once its escrow is open) and the final
// execution (once the creator's signature over the whole output verified and the settlement was
// sent), on the same escrow, settlement and receipt as a call that does not stream. Every way a
// stream can fail is refunded with its reason; refusals before the escrow are plain JSON; a
// caller that goes away does not stop a paid execution; a replay re-streams the finished one.
import { strict as assert } from "node:assert";

import { verifyReceipt } from "@agent-market/client/verify";
import type { Execution } from "@agent-market/client";

import { TestMarket } from "./src/fixtures.js";
import { readEvents, type ReadEvent } from "./src/event-stream.js";
import { sleep } from "./src/localnet.js";
import { listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, startRelayer, type RunningRelayer } from "./src/relayer.js";
import { streamedPieces, type CreatorBehaviour } from "./src/creator-server.js";

const PRICE = 250_000n;
const TASK = "stream these words to me as they come";

interface Refunded {
  code: string;
  refund_reason: string;
  refund_transaction: string | null;
  execution: Execution;
}

describe("relayer: streamed executions", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;
  let payer: Payer;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer, { behaviour: "stream", maxExecutionSecs: 3 });
    payer = await newPayer(market, relayer, 10_000_000n);
  });
  after(async () => {
    await agent?.server.close();
    await relayer?.close();
    await market?.stop();
  });
  afterEach(() => {
    agent.server.behaviour = "stream";
  });

  function post(headers: Record<string, string> = {}, task = TASK, apiKey = payer.apiKey): Promise<Response> {
    return fetch(`${relayer.url}/v1/agents/${agent.address.toBase58()}/execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: JSON.stringify({ task, parameters: { language: "en" } }),
    });
  }

  async function events(response: Response): Promise<ReadEvent[]> {
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const read: ReadEvent[] = [];
    for await (const event of readEvents(response)) read.push(event);
    return read;
  }

  async function refundedWith(behaviour: CreatorBehaviour, code: string, refund_reason: string): Promise<void> {
    agent.server.behaviour = behaviour;
    const before = await market.usdc(payer.tokenAccount);
    const read = await events(await post());
    const last = read.at(-1)!;
    assert.equal(read[0]!.event, "execution");
    assert.equal(last.event, "refunded", JSON.stringify(last));
    const refunded = last.data as Refunded;
    assert.deepEqual([refunded.code, refunded.refund_reason, refunded.execution.status], [code, refund_reason, "refunded"]);
    assert.ok(refunded.refund_transaction, "the refund's transaction is named");
    assert.equal(await market.usdc(payer.tokenAccount), before, "nothing was charged");
  }

  it("streams the execution, every chunk in order as the creator sends it, then the settled execution whose receipt verifies", async () => {
    const before = await market.usdc(payer.tokenAccount);
    const response = await post();
    const read: ReadEvent[] = [];
    const arrivals: number[] = [];
    for await (const event of readEvents(response)) {
      read.push(event);
      arrivals.push(performance.now());
    }
    assert.deepEqual(
      read.map((event) => event.id),
      read.map((_, i) => String(i)),
      "every event has the next id",
    );
    const [opened, ...rest] = read;
    const completed = rest.pop()!;
    assert.equal(opened!.event, "execution");
    const execution = opened!.data as Execution;
    assert.deepEqual([execution.status, execution.charge.held_usdc, execution.output], ["running", "0.250000", null]);
    assert.ok(execution.transactions.escrow, "the escrow's transaction is named");

    const expected = { echoed: TASK, words: TASK.split(" ").length };
    const pieces = streamedPieces(expected);
    assert.deepEqual(
      rest.map((event) => event.data),
      pieces.map((text, seq) => ({ seq, text })),
      "the chunks, whole and in order",
    );
    // Forwarded as they came: the creator waits 20 ms between chunks, and so does the reader.
    assert.ok(arrivals.at(-2)! - arrivals[1]! >= (pieces.length - 2) * 10, "chunks arrived over time, not at once");

    assert.equal(completed.event, "completed");
    const final = completed.data as Execution;
    assert.deepEqual([final.status, final.output], ["succeeded", expected]);
    assert.equal(JSON.stringify(JSON.parse(pieces.join(""))), JSON.stringify(final.output), "the output is what was streamed");
    const got = await api<Execution>(relayer, "GET", `/v1/executions/${final.id}`, { token: payer.apiKey });
    const facts = (x: Execution) => [x.id, x.status, x.output, x.receipt, x.charge, x.transactions.escrow, x.transactions.settlement];
    assert.deepEqual(facts(got.body), facts(final), "the final event is the execution as GET gives it");
    assert.equal(await market.usdc(payer.tokenAccount), before - PRICE);

    let settled = got.body;
    for (let i = 0; settled.transactions.confirmation !== "confirmed"; i += 1) {
      assert.ok(i < 200, "the settlement is confirmed");
      await sleep(100);
      settled = (await api<Execution>(relayer, "GET", `/v1/executions/${final.id}`, { token: payer.apiKey })).body;
    }
    const verified = await verifyReceipt(settled, {
      connection: market.connection,
      programId: market.programId,
      request: { task: TASK, parameters: { language: "en" } },
      expectedSigningKey: agent.server.signing.publicKey.toBase58(),
    });
    assert.equal(verified.ok, true, JSON.stringify(verified.checks.filter((check) => !check.ok)));
  });

  it("refuses before the escrow with an ordinary JSON error, and sends no event", async () => {
    const poor = await newPayer(market, relayer, 1_000_000n, 0n);
    const response = await post({}, TASK, poor.apiKey);
    assert.equal(response.status, 402);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, "insufficient_allowance");
  });

  it("refunds a stream that breaks, stalls, passes the output limit, is signed over another output, or spells an output the schema refuses", async () => {
    await refundedWith("stream_break", "creator_error", "CreatorError");
    await refundedWith("stream_stall", "creator_timeout", "Timeout");
    await refundedWith("stream_huge", "creator_error", "CreatorError");
    await refundedWith("stream_bad_signature", "invalid_result", "InvalidSignature");
    await refundedWith("stream_invalid_output", "invalid_result", "OutputInvalid");
  });

  it("settles a paid execution whose caller went away mid-stream", async () => {
    const before = await market.usdc(payer.tokenAccount);
    const abort = new AbortController();
    const response = await post({}, TASK).then((r) => r);
    let id: string | undefined;
    try {
      for await (const event of readEvents(response)) {
        if (event.event === "execution") id = (event.data as Execution).id;
        if (event.event === "output") {
          abort.abort();
          await response.body?.cancel();
          break;
        }
      }
    } catch {
      // The cancelled body ends the read.
    }
    assert.ok(id, "the execution was named before the caller left");
    let execution: Execution | undefined;
    for (let i = 0; execution?.status !== "succeeded"; i += 1) {
      assert.ok(i < 100, "the execution settles without its caller");
      await sleep(100);
      execution = (await api<Execution>(relayer, "GET", `/v1/executions/${id}`, { token: payer.apiKey })).body;
    }
    assert.ok(execution.transactions.settlement);
    assert.equal(await market.usdc(payer.tokenAccount), before - PRICE);
  });

  it("replays a finished streamed call: re-streamed when asked, as JSON otherwise, charged once", async () => {
    const idempotency = { "idempotency-key": `stream-${Date.now()}` };
    const before = await market.usdc(payer.tokenAccount);
    const first = await events(await post(idempotency));
    const final = first.at(-1)!.data as Execution;

    const again = await post(idempotency);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    const replayed = await events(again);
    assert.deepEqual(
      replayed.map((event) => event.event),
      ["execution", "output", "completed"],
    );
    const chunk = replayed[1]!.data as { seq: number; text: string };
    assert.deepEqual([chunk.seq, JSON.parse(chunk.text)], [0, final.output], "the whole output, one chunk");
    assert.equal((replayed[2]!.data as Execution).id, final.id);

    const json = await api<Execution>(relayer, "POST", `/v1/agents/${agent.address.toBase58()}/execute`, {
      token: payer.apiKey,
      body: { task: TASK, parameters: { language: "en" } },
      headers: idempotency,
    });
    assert.deepEqual([json.status, json.body.id, json.body.output], [200, final.id, final.output]);
    assert.equal(await market.usdc(payer.tokenAccount), before - PRICE, "charged once");
  });

  it("streams a creator that answers whole as one chunk", async () => {
    agent.server.behaviour = "echo";
    const read = await events(await post());
    assert.deepEqual(
      read.map((event) => event.event),
      ["execution", "output", "completed"],
    );
    const chunk = read[1]!.data as { seq: number; text: string };
    assert.deepEqual([chunk.seq, JSON.parse(chunk.text)], [0, (read[2]!.data as Execution).output]);
  });
});
