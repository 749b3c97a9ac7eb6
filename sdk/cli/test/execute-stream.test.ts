// `agent-market execute --stream` against a stand-in API speaking the caller's side of a streamed
// execution (docs/api.md): the output printed piece by piece as it arrives, then the charge; a
// refund after what arrived; an API that answers JSON; a stream that ends early.
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";

import { cli, FIXED_CHARGE, json, serve, type Server } from "./helpers.js";

const AGENT = "Bp3BbhbyBNoTt3LgewDgCf2ckx5pHoUyPxdEMC6KHgyL";
const KEY = { AGENT_MARKET_API_KEY: "svc_test_k" };
const running = { object: "execution", id: "exec_1", status: "running", output: null };
const succeeded = {
  ...running,
  status: "succeeded",
  output: "once upon a time",
  charge: FIXED_CHARGE,
  transactions: { settlement: "sig" },
};

function send(res: ServerResponse, id: number, event: string, data: unknown): void {
  res.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Resolves once `check` holds, polling: the CLI runs in this process. */
async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 5) {
    if (waited > 5000) throw new Error("waited 5 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("agent-market execute --stream", () => {
  let api: Server;
  afterEach(async () => api?.close());
  const listing = { object: "agent", id: AGENT, name: "Words", pricing: { model: "pay_per_use", price_usdc: "0.250000" } };

  /** A stand-in API whose execute answers with `stream`, or `answer` when the request is not for a stream. */
  async function standIn(stream: (res: ServerResponse) => Promise<void> | void): Promise<void> {
    api = await serve((request, _raw, res) => {
      if (request.method === "GET") return json(res, 200, listing);
      res.writeHead(200, { "content-type": "text/event-stream", "request-id": "req_1" });
      res.write(": keep-alive\n\n");
      void stream(res);
    });
  }

  it("prints each piece of the output as it arrives, then the charge", async () => {
    const written: string[] = [];
    await standIn(async (res) => {
      send(res, 0, "execution", running);
      send(res, 1, "output", { seq: 0, text: "once " });
      // The next piece waits until the first was printed: it was printed as it arrived.
      await until(() => written.length > 0);
      send(res, 2, "output", { seq: 1, text: "upon a time" });
      send(res, 3, "completed", succeeded);
      res.end();
    });
    const ran = await cli(["execute", AGENT, "--task", "tell", "--stream", "--api", api.url], KEY, written);
    assert.equal(ran.code, 0, ran.err);
    assert.deepEqual(written, ["once ", "upon a time", "\n"]);
    assert.equal(ran.out, "", "the output is not printed a second time");
    assert.equal(ran.err, "Charged 0.250000 USDC (0.247500 to the creator, 0.002500 fee) for exec_1, settled in sig");
    const post = api.requests.find((r) => r.method === "POST")!;
    assert.equal(post.headers.accept, "text/event-stream");
    assert.deepEqual(post.body, { task: "tell", parameters: {}, max_price_usdc: "0.250000" });
  });

  it("says a refunded call was refunded, after what had arrived, exit 1", async () => {
    await standIn((res) => {
      send(res, 0, "execution", running);
      send(res, 1, "output", { seq: 0, text: "once " });
      send(res, 2, "refunded", {
        code: "invalid_result_signature",
        message: "the creator's result does not verify",
        refund_reason: "invalid_result_signature",
        refund_transaction: "refund_sig",
        execution: { ...running, status: "refunded" },
      });
      res.end();
    });
    const ran = await cli(["execute", AGENT, "--task", "tell", "--stream", "--api", api.url], KEY);
    assert.equal(ran.code, 1);
    assert.equal(ran.written, "once \n");
    assert.match(ran.err, /\(the output above is all that arrived\)/);
    assert.match(ran.err, /the agent failed: the creator's result does not verify \(invalid_result_signature, execution exec_1\); the escrow was refunded \(transaction refund_sig\)/);
  });

  it("names the execution to read when the stream ends early", async () => {
    await standIn((res) => {
      send(res, 0, "execution", running);
      send(res, 1, "error", { code: "stream_buffer_exceeded", message: "the reader was too slow" });
      res.end();
    });
    const ran = await cli(["execute", AGENT, "--task", "tell", "--stream", "--api", api.url], KEY);
    assert.equal(ran.code, 1);
    assert.match(ran.err, /the stream ended early: the reader was too slow \(stream_buffer_exceeded\)/);
    assert.match(ran.err, /agent-market executions get exec_1/);
  });

  it("prints an answer in JSON (a replay, an API that does not stream) as the output it is", async () => {
    api = await serve((request, _raw, res) => json(res, 200, request.method === "GET" ? listing : succeeded));
    const ran = await cli(["execute", AGENT, "--task", "tell", "--stream", "--api", api.url], KEY);
    assert.equal(ran.code, 0, ran.err);
    assert.equal(ran.written, "once upon a time\n");
    assert.match(ran.err, /^Charged 0.250000 USDC/);
  });

  it("prints only the final execution with --json", async () => {
    await standIn((res) => {
      send(res, 0, "execution", running);
      send(res, 1, "output", { seq: 0, text: "once upon a time" });
      send(res, 2, "completed", succeeded);
      res.end();
    });
    const ran = await cli(["execute", AGENT, "--task", "tell", "--stream", "--json", "--api", api.url], KEY);
    assert.equal(ran.code, 0, ran.err);
    assert.equal(ran.written, "");
    assert.deepEqual(JSON.parse(ran.out), succeeded);
  });
});
