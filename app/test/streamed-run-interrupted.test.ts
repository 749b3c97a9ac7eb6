// The run form's answer to a stream that ends before the outcome (no browser): the run goes on at
// the relayer, so its outcome is read by id until final. A local server plays the relayer.
import { strict as assert } from "node:assert";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { AgentMarket, ExecutionFailedError } from "@agent-market/client";

import { streamedRun } from "../src/data/streamed-run.js";

const BASE = { object: "execution", id: "exec_3", agent: "A", network: "devnet", api_key_id: "key_1", receipt: null, charge: null, failure: null };
const RUNNING = { ...BASE, status: "running", output: null, transactions: { escrow: "e", settlement: null, refund: null, confirmation: null } };

describe("streamedRun, when the stream ends early", () => {
  let server: Server;
  let reads = 0;
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  /** A relayer whose stream gives up after one chunk, and whose execution reads give `final` from the second on. */
  async function relayer(final: Record<string, unknown>): Promise<AgentMarket> {
    reads = 0;
    server = createServer((req, res) => {
      if (req.method === "POST") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          `id: 0\nevent: execution\ndata: ${JSON.stringify(RUNNING)}\n\nid: 1\nevent: output\ndata: {"seq":0,"text":"Hel"}\n\n` +
            `id: 2\nevent: error\ndata: {"code":"stream_buffer_exceeded","message":"too slow"}\n\n`,
        );
        return;
      }
      reads += 1;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reads === 1 ? RUNNING : final));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return new AgentMarket({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: "sess_test" });
  }

  it("shows what arrived, then reads the execution until it has succeeded", async () => {
    const succeeded = { ...RUNNING, status: "succeeded", output: "Hello" };
    const texts: string[] = [];
    const execution = await streamedRun(await relayer(succeeded), "A", { task: "t", parameters: {} }, {}, (text) => texts.push(text));
    assert.deepEqual(texts, ["Hel"]);
    assert.equal(execution.status, "succeeded");
    assert.equal(execution.output, "Hello");
    assert.equal(reads, 2);
  });

  it("rejects with ExecutionFailedError, carrying the refund, when it was refunded", async () => {
    const refunded = {
      ...RUNNING,
      status: "refunded",
      failure: { code: "creator_timeout", message: "no result in time", refund_reason: "TIMEOUT" },
      transactions: { escrow: "e", settlement: null, refund: "sig_refund", confirmation: null },
    };
    const error = await streamedRun(await relayer(refunded), "A", { task: "t", parameters: {} }, {}, () => undefined).catch((e: unknown) => e);
    assert.ok(error instanceof ExecutionFailedError, String(error));
    assert.equal(error.code, "creator_timeout");
    assert.equal(error.refundTransaction, "sig_refund");
    assert.equal(error.execution.status, "refunded");
  });
});
