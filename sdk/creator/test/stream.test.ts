// A streaming handler over real HTTP on both transports: output events as the chunks are yielded,
// the result signed over their concatenation, errors as error events, and JSON to a request that
// does not accept a stream.
import assert from "node:assert/strict";

import { verifyCreatorResponse } from "@agent-market/program";

import type { AgentContext, AgentServiceOptions } from "../src/index.js";
import {
  executeRequest,
  expectedAnswer,
  post,
  postForStream,
  servedAgent,
  servedOnBothTransports,
  sseEvents,
  creatorSeed,
  marketplaceKey,
  type SseEvent,
} from "./helpers.js";

type Mode = "words" | "metered" | "throw" | "not_text" | "too_long" | "gated" | "endless";
interface StreamParameters {
  words: string[];
  mode?: Mode;
  units?: number;
}

/** Releases a "gated" handler's next chunk: the test calls it once it has read the previous one. */
const gates = new Map<string, () => void>();
const contexts = new Map<string, AgentContext<StreamParameters>>();

const options: AgentServiceOptions<StreamParameters> = {
  signingKey: creatorSeed,
  marketplaceKey,
  agents: [servedAgent],
  inputSchema: {
    type: "object",
    properties: { words: { type: "array", items: { type: "string" } }, mode: { type: "string" }, units: { type: "integer" } },
    required: ["words"],
  },
  outputSchema: { type: "string", maxLength: 40 },
  onError: () => {},
  async *handler(context) {
    contexts.set(context.executionId, context);
    const { words, mode = "words" } = context.parameters;
    for (const word of words) {
      if (mode === "gated") await new Promise<void>((resolve) => gates.set(context.executionId, resolve));
      yield word;
    }
    if (mode === "throw") throw new Error("the model went away");
    if (mode === "too_long") yield "x".repeat(41);
    if (mode === "not_text") yield 7 as unknown as string;
    if (mode === "endless") {
      while (!context.signal.aborted) {
        yield ".";
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    if (mode === "metered") return BigInt(context.parameters.units ?? 0);
  },
};

async function streamed(url: string, body: unknown): Promise<{ response: Response; events: SseEvent[] }> {
  const response = await postForStream(url, body);
  const events: SseEvent[] = [];
  for await (const event of sseEvents(response.body!)) events.push(event);
  return { response, events };
}

/** The answer a streamed call amounts to: its result with the concatenated output. */
function assembled(events: SseEvent[]): unknown {
  const text = events.filter((e) => e.event === "output").map((e) => e.data.text as string).join("");
  const result = events.at(-1)!;
  assert.equal(result.event, "result", JSON.stringify(events));
  return { ...result.data, output: text };
}

describe("streaming handlers", () => {
  const served = servedOnBothTransports(options);
  for (const [name, url] of [
    ["node:http", () => served.nodeUrl],
    ["fastify", () => served.fastifyUrl],
  ] as const) {
    describe(`over ${name}`, () => {
      it("streams output events from seq 0, then a result signed over their concatenation", async () => {
        const request = executeRequest("tell", { words: ["once ", "upon ", "a time"] });
        const { response, events } = await streamed(url(), request);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("content-type"), "text/event-stream; charset=utf-8");
        assert.deepEqual(
          events.slice(0, 3).map((e) => [e.event, e.data]),
          [["output", { seq: 0, text: "once " }], ["output", { seq: 1, text: "upon " }], ["output", { seq: 2, text: "a time" }]],
        );
        assert.equal(events.length, 4);
        assert.equal(events[3]!.data.format, "text");
        assert.equal("output" in events[3]!.data, false, "the result carries no output");
        const check = verifyCreatorResponse(assembled(events), expectedAnswer(request));
        assert.ok(check.ok && check.output === "once upon a time", check.ok ? "" : check.message);
        assert.equal(verifyCreatorResponse({ ...(assembled(events) as object), output: "once upon a tim" }, expectedAnswer(request)).ok, false);
      });

      it("sends each chunk as it is yielded", async () => {
        const request = executeRequest("tell", { words: ["one", "two"], mode: "gated" });
        const response = await postForStream(url(), request);
        const events = sseEvents(response.body!);
        while (!gates.has(request.execution_id)) await new Promise((resolve) => setTimeout(resolve, 5));
        gates.get(request.execution_id)!();
        // The second chunk waits on the gate, so the first arrives on its own.
        assert.deepEqual((await events.next()).value, { event: "output", data: { seq: 0, text: "one" } });
        gates.get(request.execution_id)!();
        assert.deepEqual((await events.next()).value, { event: "output", data: { seq: 1, text: "two" } });
        assert.equal((await events.next()).value?.event, "result");
      });

      it("answers a request that does not accept a stream in JSON: the concatenation, signed", async () => {
        const request = executeRequest("tell", { words: ["a", "b", "c"] });
        const answer = await post(url(), "/execute", request);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.contentType, "application/json; charset=utf-8");
        assert.equal(answer.body.output, "abc");
        assert.ok(verifyCreatorResponse(answer.body, expectedAnswer(request)).ok);
      });

      it("signs the units a metered generator returns, and refuses more than max_units with an error event", async () => {
        const terms = { max_units: "5", price_per_unit_usdc: "0.001000" };
        const request = executeRequest("tell", { words: ["a"], mode: "metered", units: 5 }, terms);
        const { events } = await streamed(url(), request);
        const check = verifyCreatorResponse(assembled(events), expectedAnswer(request));
        assert.ok(check.ok && check.units === 5n);
        const over = await streamed(url(), executeRequest("tell", { words: ["a"], mode: "metered", units: 6 }, terms));
        assert.deepEqual(
          over.events.map((e) => e.event),
          ["output", "error"],
        );
        assert.deepEqual(over.events[1]!.data, {
          code: "invalid_output",
          message: "the handler answered 6 units, above the call's max_units 5",
        });
      });

      it("ends with an error event, never a result, when the generator throws or breaks the output schema", async () => {
        const thrown = await streamed(url(), executeRequest("tell", { words: ["a"], mode: "throw" }));
        assert.deepEqual(thrown.events.at(-1), { event: "error", data: { code: "handler_error", message: "the model went away" } });
        const long = await streamed(url(), executeRequest("tell", { words: ["a"], mode: "too_long" }));
        assert.equal(long.events.at(-1)!.data.code, "invalid_output");
        const notText = await streamed(url(), executeRequest("tell", { words: [], mode: "not_text" }));
        assert.deepEqual(notText.events.map((e) => [e.event, e.data.code]), [["error", "handler_error"]]);
      });

      it("stops at the deadline with a deadline_passed error event, and aborts the handler's signal", async () => {
        const deadline = new Date(Date.now() + 300).toISOString();
        const request = executeRequest("tell", { words: [], mode: "endless" }, { deadline });
        const { events } = await streamed(url(), request);
        assert.ok(events.length > 1);
        assert.deepEqual(events.at(-1), {
          event: "error",
          data: { code: "deadline_passed", message: "the deadline passed before the handler finished" },
        });
        assert.equal(contexts.get(request.execution_id)!.signal.aborted, true);
      });

      it("aborts the handler's signal when the marketplace hangs up mid-stream", async () => {
        const request = executeRequest("tell", { words: [], mode: "endless" });
        const hangUp = new AbortController();
        const response = await postForStream(url(), request, hangUp.signal);
        const events = sseEvents(response.body!);
        await events.next();
        hangUp.abort();
        await events.next().catch(() => {});
        const context = contexts.get(request.execution_id)!;
        for (let waited = 0; !context.signal.aborted && waited < 2000; waited += 10) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(context.signal.aborted, true);
      });
    });
  }
});
