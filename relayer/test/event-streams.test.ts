// The two event streams of a streamed execution: the creator's answer read as it arrives (split
// anywhere, its chunks checked in order and forwarded before the signature is known, the output
// they spell the one verified), and the caller's stream, which never lets a reader that does not
// read make the relayer hold more than its buffer.
import { strict as assert } from "node:assert";
import { connect } from "node:net";

import Fastify from "fastify";

import { EventStreamReader } from "../src/creator/event-stream.js";
import { StreamedAnswer, type OutputChunk } from "../src/creator/streamed-answer.js";
import { EventStreamReply } from "../src/http/event-stream-reply.js";
import { EMPTY_ROW, type ExecutionRow } from "../src/executions/execution-row.js";

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Feeds `text` to a reader one byte at a time: the worst split a network can make. */
function byteByByte(push: (piece: Buffer) => void, text: string): void {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += 1) push(bytes.subarray(i, i + 1));
}

describe("a creator's streamed answer", () => {
  it("reads events split at any byte, with CRLF or CR line ends, comments and multi-line data", () => {
    const reader = new EventStreamReader();
    const read: { event: string; data: string }[] = [];
    byteByByte((piece) => read.push(...reader.push(piece)), ": hello\r\nevent: output\r\ndata: a\r\ndata: b\r\n\r\nevent: é\rdata: ü\r\rdata: plain\n\n");
    assert.deepEqual(read, [
      { event: "output", data: "a\nb" },
      { event: "é", data: "ü" },
      { event: "message", data: "plain" },
    ]);
  });

  it("forwards each chunk as it completes and verifies the output they spell", () => {
    const forwarded: OutputChunk[] = [];
    const answer = new StreamedAnswer((chunk) => forwarded.push(chunk));
    answer.push(Buffer.from(event("output", { seq: 0, text: '{"a":' })));
    assert.deepEqual(forwarded, [{ seq: 0, text: '{"a":' }], "forwarded before the rest arrived");
    answer.push(Buffer.from(event("output", { seq: 1, text: "1}" }) + event("result", { format: "json", signature: "s" })));
    assert.deepEqual(answer.finish(), { ok: true, body: { signature: "s", output: { a: 1 } } });

    const text = new StreamedAnswer(() => undefined);
    text.push(Buffer.from(event("output", { seq: 0, text: "hi " }) + event("output", { seq: 1, text: "there" }) + event("result", {})));
    assert.deepEqual(text.finish(), { ok: true, body: { output: "hi there" } });
  });

  it("refuses a gap in the chunks, an event after the result, no result, a stream that is not JSON, and the creator's error", () => {
    const finished = (body: string) => {
      const forwarded: OutputChunk[] = [];
      const answer = new StreamedAnswer((chunk) => forwarded.push(chunk));
      answer.push(Buffer.from(body));
      return { result: answer.finish(), forwarded: forwarded.length };
    };
    assert.deepEqual(finished(event("output", { seq: 0, text: "a" }) + event("output", { seq: 2, text: "b" }) + event("result", {})), {
      result: { ok: false, failure: "invalid_response", message: 'output event 1 is not {"seq": 1, "text": <string>}' },
      forwarded: 1,
    });
    assert.deepEqual(finished(event("result", {}) + event("output", { seq: 0, text: "late" })).result, {
      ok: false,
      failure: "invalid_response",
      message: "a output event followed the result event",
    });
    assert.deepEqual(finished(event("output", { seq: 0, text: "a" })).result, {
      ok: false,
      failure: "invalid_response",
      message: "the stream ended without a result event",
    });
    assert.deepEqual(finished(event("output", { seq: 0, text: "{" }) + event("result", { format: "json" })).result, {
      ok: false,
      failure: "invalid_response",
      message: "the chunks of a json stream do not spell JSON",
    });
    assert.deepEqual(finished(event("error", { code: "model_overloaded" })).result, {
      ok: false,
      failure: "http_error",
      message: "the stream ended with the creator's error model_overloaded",
    });
  });
});

describe("a caller's event stream", () => {
  it("ends with an error event once a reader that stops reading leaves more than the buffer unread, and holds no more", async () => {
    const buffer_bytes = 64 * 1024;
    const app = Fastify();
    let stream: EventStreamReply | undefined;
    const chunk = "x".repeat(16 * 1024);
    let sent = 0;
    let heldAtMost = 0;
    app.get("/stream", async (_request, reply) => {
      stream = new EventStreamReply(reply, { buffer_bytes, keepalive_ms: 60_000 });
      const row: ExecutionRow = {
        ...EMPTY_ROW,
        id: "exec_test",
        api_key_id: "key_test",
        wallet: "wallet",
        network: "devnet",
        agent: "agent",
        mode: "sync",
        state: "running",
        owner: null,
        task: "task",
        parameters: {},
        request_hash: Buffer.alloc(32),
        payer_token_account: "token",
        used_subscription: false,
        quoted_usdc: "1",
        escrow_tx: null,
        created_at: new Date(),
      };
      stream.opened(row);
      // A creator far faster than the reader: 64 MiB offered.
      for (let seq = 0; seq < 4096; seq += 1) {
        stream.output({ seq, text: chunk });
        sent += 1;
        heldAtMost = Math.max(heldAtMost, reply.raw.writableLength);
        if (reply.raw.writableEnded) break;
        if (seq % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      return reply;
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as { port: number };
    try {
      const socket = connect(port, "127.0.0.1");
      socket.write("GET /stream HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n");
      // The reader takes nothing while the relayer writes.
      socket.pause();
      for (let waited = 0; !stream?.ended && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(stream?.ended, "the stream ended");
      assert.ok(sent < 4096, `the relayer stopped forwarding (after ${sent} chunks)`);
      assert.ok(heldAtMost <= buffer_bytes + chunk.length + 1024, `at most the buffer and one chunk held (${heldAtMost} bytes)`);
      // Now the reader reads: what it finds last is the error event.
      let received = "";
      socket.on("data", (piece: Buffer) => (received += piece.toString("latin1")));
      socket.resume();
      // The response ends with chunked encoding's last chunk; the connection itself may stay open.
      for (let waited = 0; !received.endsWith("0\r\n\r\n") && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
      assert.match(received.slice(-400), /event: error\ndata: \{"code":"stream_buffer_exceeded"/);
    } finally {
      await app.close();
    }
  });
});
