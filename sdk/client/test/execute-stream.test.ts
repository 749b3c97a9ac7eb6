// executeStream against a local server speaking the streamed execute of docs/api.md: the events
// written in small pieces over time, as a network delivers them.
import { strict as assert } from "node:assert";
import type { ServerResponse } from "node:http";

import {
  AgentMarket,
  AgentMarketError,
  ConflictError,
  ExecutionFailedError,
  PaymentRequiredError,
  StreamInterruptedError,
  type ExecutionStream,
  type OutputChunk,
} from "../src/index.js";
import { REQUEST_ID, apiError, execution, startFakeApi, type Canned, type FakeApi } from "./fake-api.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";
const INPUT = { task: "summarize", parameters: { language: "en" } };
const NO_WAIT = { "retry-after": "0" };
const RUNNING = execution("exec_3", { status: "running", output: null, charge: null, transactions: { escrow: "e", settlement: null, refund: null, confirmation: "processed" } });
const DONE = execution("exec_3", { output: "Hello, world" });

/** One event, CRLF-framed, its id counting from 0. */
function frame(id: number, event: string, data: unknown): string {
  return `id: ${id}\r\nevent: ${event}\r\ndata: ${JSON.stringify(data)}\r\n\r\n`;
}

/**
 * An event stream written in pieces of 1–5 bytes, a few milliseconds apart; a number is a pause of
 * that many milliseconds, a promise a pause until it settles. Ends the answer after the last step
 * unless `end` is false (the stream then stays open: a silent connection).
 */
function stream(steps: (string | number | Promise<unknown>)[], end = true): Canned {
  return {
    respond: (res: ServerResponse) => {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "request-id": REQUEST_ID });
      res.flushHeaders();
      void (async () => {
        let size = 1;
        for (const step of steps) {
          if (typeof step === "number") await new Promise((resolve) => setTimeout(resolve, step));
          else if (typeof step !== "string") await step;
          else {
            const bytes = Buffer.from(step);
            for (let at = 0; at < bytes.length && !res.destroyed; at += size, size = (size % 5) + 1) {
              res.write(bytes.subarray(at, at + size));
              await new Promise((resolve) => setTimeout(resolve, 1));
            }
          }
        }
        if (end) res.end();
      })();
    },
  };
}

describe("executeStream", () => {
  let api: FakeApi;
  afterEach(async () => api?.close());

  const client = (options: { maxRetries?: number; timeoutMs?: number } = {}) => new AgentMarket({ apiKey: "svc_test_abc", baseUrl: api.url, ...options });

  async function collect(execution: ExecutionStream): Promise<{ chunks: OutputChunk[]; error: unknown }> {
    const chunks: OutputChunk[] = [];
    try {
      for await (const chunk of execution) chunks.push(chunk);
    } catch (error) {
      return { chunks, error };
    }
    return { chunks, error: undefined };
  }

  it("asks for an event stream, yields each chunk as it arrives, then resolves with the final execution", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    api = await startFakeApi([
      stream([
        frame(0, "execution", RUNNING),
        ": keep-alive\r\n\r\n",
        frame(1, "output", { seq: 0, text: "Hello, " }),
        // The rest waits until the client has shown the first chunk: it arrives before the outcome.
        held,
        frame(2, "output", { seq: 1, text: "wörld" }) + frame(3, "completed", DONE),
      ]),
    ]);
    const answer = await client().agents.executeStream(AGENT, INPUT, { maxPriceUsdc: "0.250000", idempotencyKey: "idem_stream" });
    assert.equal((await answer.opened).status, "running");
    const seen: string[] = [];
    for await (const chunk of answer) {
      seen.push(chunk.text);
      if (chunk.seq === 0) {
        assert.equal(await Promise.race([answer.result.then(() => "final"), new Promise((resolve) => setTimeout(resolve, 50, "pending"))]), "pending");
        release();
      }
    }
    assert.deepEqual(seen, ["Hello, ", "wörld"]);
    const final = await answer.result;
    assert.equal(final.status, "succeeded");
    assert.equal(final.output, "Hello, world");
    // Iterating again starts over from the first chunk.
    assert.deepEqual((await collect(answer)).chunks, [
      { seq: 0, text: "Hello, " },
      { seq: 1, text: "wörld" },
    ]);
    const [request] = api.requests;
    assert.equal(request!.headers.accept, "text/event-stream");
    assert.equal(request!.headers.authorization, "Bearer svc_test_abc");
    assert.equal(request!.headers["idempotency-key"], "idem_stream");
    assert.deepEqual(request!.body, { ...INPUT, max_price_usdc: "0.250000" });
  });

  it("resolves result without anyone iterating", async () => {
    api = await startFakeApi([stream([frame(0, "execution", RUNNING), frame(1, "output", { seq: 0, text: "Hello, world" }), frame(2, "completed", DONE)])]);
    const answer = await client().agents.executeStream(AGENT, INPUT);
    assert.equal((await answer.result).id, "exec_3");
  });

  it("throws what execute throws for a refusal before the escrow opens, and retries what execute retries", async () => {
    api = await startFakeApi([apiError(402, "payment_error", "insufficient_balance", { required_usdc: "0.250000", balance_usdc: "0.100000" })]);
    const refused = await client()
      .agents.executeStream(AGENT, INPUT)
      .then(() => assert.fail("expected a refusal"), (error: unknown) => error);
    assert.ok(refused instanceof PaymentRequiredError);
    assert.equal(refused.required, 250_000n);
    await api.close();

    api = await startFakeApi([apiError(409, "conflict_error", "price_above_maximum", {}, NO_WAIT)]);
    await assert.rejects(client().agents.executeStream(AGENT, INPUT, { maxPriceUsdc: "0.100000" }), ConflictError);
    assert.equal(api.requests.length, 1);
    await api.close();

    api = await startFakeApi([
      apiError(409, "conflict_error", "idempotency_request_in_progress", {}, NO_WAIT),
      stream([frame(0, "execution", RUNNING), frame(1, "output", { seq: 0, text: "Hello, world" }), frame(2, "completed", DONE)]),
    ]);
    assert.equal((await (await client().agents.executeStream(AGENT, INPUT)).result).id, "exec_3");
    assert.equal(api.requests[0]!.headers["idempotency-key"], api.requests[1]!.headers["idempotency-key"]);
  });

  it("takes a JSON answer (a relayer that does not stream) as the final execution, its output one chunk", async () => {
    api = await startFakeApi([{ status: 200, body: execution("exec_4", { output: { ok: true } }) }]);
    const answer = await client().agents.executeStream(AGENT, INPUT);
    assert.deepEqual((await collect(answer)).chunks, [{ seq: 0, text: '{"ok":true}' }]);
    assert.equal((await answer.result).id, "exec_4");
    assert.equal((await answer.opened).id, "exec_4");
  });

  it("rejects with ExecutionFailedError when the escrow is refunded, carrying the execution and the refund", async () => {
    const refunded = execution("exec_3", { status: "refunded", output: null, failure: { code: "invalid_result", message: null, refund_reason: "InvalidResult" } });
    api = await startFakeApi([
      stream([
        frame(0, "execution", RUNNING),
        frame(1, "output", { seq: 0, text: "partial" }),
        frame(2, "refunded", { code: "invalid_result", message: "the result broke the output schema", refund_reason: "InvalidResult", refund_transaction: "sig123", execution: refunded }),
      ]),
    ]);
    const answer = await client().agents.executeStream(AGENT, INPUT);
    const { chunks, error } = await collect(answer);
    assert.deepEqual(chunks, [{ seq: 0, text: "partial" }]);
    assert.ok(error instanceof ExecutionFailedError, String(error));
    assert.equal(error.code, "invalid_result");
    assert.equal(error.execution.status, "refunded");
    assert.equal(error.refundTransaction, "sig123");
    assert.equal(error.details.refund_reason, "InvalidResult");
    assert.equal(error.requestId, REQUEST_ID);
    await assert.rejects(answer.result, (e) => e === error);
  });

  it("rejects with StreamInterruptedError, naming the execution to read, when the stream ends early", async () => {
    const cases: [Canned, string][] = [
      [stream([frame(0, "execution", RUNNING), frame(1, "error", { code: "stream_buffer_exceeded", message: "the reader was too slow" })]), "stream_buffer_exceeded"],
      [stream([frame(0, "execution", RUNNING), frame(1, "output", { seq: 0, text: "a" })]), "stream_ended"],
      [stream([frame(0, "execution", RUNNING), frame(1, "output", { seq: 1, text: "b" })]), "invalid_response"],
    ];
    for (const [answer, code] of cases) {
      api = await startFakeApi([answer]);
      const streamed = await client().agents.executeStream(AGENT, INPUT);
      const error = await streamed.result.then(() => assert.fail("expected a rejection"), (e: unknown) => e);
      assert.ok(error instanceof StreamInterruptedError, String(error));
      assert.equal(error.code, code);
      assert.equal(error.executionId, "exec_3");
      await api.close();
    }
  });

  it("ends a stream that breaks or stays silent longer than timeoutMs; keep-alives keep it open", async () => {
    api = await startFakeApi([
      {
        respond: (res) => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(frame(0, "execution", RUNNING));
          setTimeout(() => res.destroy(), 20);
        },
      },
    ]);
    let error = await (await client().agents.executeStream(AGENT, INPUT)).result.catch((e: unknown) => e);
    assert.ok(error instanceof StreamInterruptedError && error.code === "connection_error", String(error));
    assert.equal(error.executionId, "exec_3");
    await api.close();

    api = await startFakeApi([stream([frame(0, "execution", RUNNING)], false)]);
    error = await (await client({ timeoutMs: 200 }).agents.executeStream(AGENT, INPUT)).result.catch((e: unknown) => e);
    assert.ok(error instanceof StreamInterruptedError && error.code === "timeout", String(error));
    await api.close();

    const keepAlives = Array.from({ length: 6 }, () => [60, ": keep-alive\n\n"]).flat();
    api = await startFakeApi([stream([frame(0, "execution", RUNNING), ...keepAlives, frame(1, "output", { seq: 0, text: "Hello, world" }), frame(2, "completed", DONE)])]);
    assert.equal((await (await client({ timeoutMs: 200 }).agents.executeStream(AGENT, INPUT)).result).id, "exec_3");
  });

  it("stops reading when the caller aborts, rejecting with the abort reason", async () => {
    api = await startFakeApi([stream([frame(0, "execution", RUNNING)], false)]);
    const controller = new AbortController();
    const answer = await client().agents.executeStream(AGENT, INPUT, { signal: controller.signal });
    await answer.opened;
    controller.abort();
    const error = await answer.result.catch((e: unknown) => e);
    assert.ok(!(error instanceof AgentMarketError));
    assert.equal((error as Error).name, "AbortError");
  });
});
