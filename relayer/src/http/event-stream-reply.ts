// The caller's side of a streamed execution (docs/api.md, "Streamed executions"): once the escrow
// is open the answer becomes `text/event-stream` (every refusal before that is an ordinary JSON
// error), with the execution, each chunk of the creator's output as it arrives, and the final
// execution or its refund. The run never waits on the reader: what the socket has not taken is
// bounded by `buffer_bytes`, past which the stream ends with an error event and the execution
// finishes regardless, to be read by id.
import type { FastifyReply } from "fastify";

import type { OutputChunk } from "../creator/streamed-answer.js";
import type { ExecutionRow } from "../executions/execution-row.js";
import type { ExecutionStream } from "../executions/execution-stream.js";
import { renderExecution } from "../executions/execution-view.js";

/** Whether the caller asked for an event stream. */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

export class EventStreamReply implements ExecutionStream {
  private started = false;
  private over = false;
  private next_id = 0;
  private outputs = 0;
  private keepalive: NodeJS.Timeout | undefined;
  private execution_id = "";

  constructor(
    private readonly reply: FastifyReply,
    /** The unread bytes past which the stream is cut (STREAM_BUFFER_BYTES), and the keep-alive period (STREAM_KEEPALIVE_MS). */
    private readonly options: { buffer_bytes: number; keepalive_ms: number },
  ) {}

  /** Whether the stream has ended: finished, cut for a slow reader, or closed by the caller. */
  get ended(): boolean {
    return this.over;
  }

  /** Whether the answer became a stream: the route must then send nothing itself. */
  get streaming(): boolean {
    return this.started;
  }

  opened(row: ExecutionRow): void {
    this.execution_id = row.id;
    this.start();
    this.send("execution", renderExecution(row));
  }

  output(chunk: OutputChunk): void {
    this.outputs += 1;
    this.send("output", chunk);
  }

  /**
   * The execution as it ended: `completed` with the final execution, `refunded` with why, or, for
   * one handed to the finish job mid-way, an error naming where to follow it. A stream that never
   * started (a replay) starts here with the execution and its whole output.
   */
  finish(row: ExecutionRow): void {
    const execution = renderExecution(row);
    if (!this.started) {
      this.start();
      this.send("execution", { ...execution, status: row.state === "opening" ? "pending" : "running", output: null });
    }
    if (execution.status === "succeeded") {
      // A creator that answered whole (or a replay) streams its output as one chunk.
      if (this.outputs === 0) this.output({ seq: 0, text: typeof execution.output === "string" ? execution.output : JSON.stringify(execution.output) });
      this.send("completed", execution);
    } else if (execution.status === "refunded" || execution.status === "failed") {
      this.send("refunded", {
        code: row.failure_code ?? "internal_error",
        message: row.failure_message,
        refund_reason: row.refund_reason,
        refund_transaction: row.refund_tx?.signature ?? null,
        execution,
      });
    } else {
      this.send("error", {
        code: "execution_in_progress",
        message: `The execution could not finish within this request; it ends settled or refunded by itself: follow it at /v1/executions/${row.id}.`,
        execution_id: row.id,
      });
    }
    this.end();
  }

  /** Ends a started stream after a failure of the relayer's own, naming the execution to follow. */
  fail(): void {
    const execution_id = this.execution_id;
    this.send("error", { code: "internal_error", message: `Follow the execution at /v1/executions/${execution_id}.`, execution_id });
    this.end();
  }

  private start(): void {
    this.started = true;
    const res = this.reply.raw;
    this.reply.hijack();
    // The headers set on the reply so far (Request-Id, Idempotent-Replayed), which hijacking skips.
    const set = Object.fromEntries(Object.entries(this.reply.getHeaders()).filter((entry): entry is [string, string | number | string[]] => entry[1] !== undefined));
    res.writeHead(200, {
      ...set,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      // Proxies that buffer responses (nginx) would hold the chunks back.
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    res.on("close", () => this.end());
    this.keepalive = setInterval(() => {
      if (!this.over) res.write(": keep-alive\n\n");
    }, this.options.keepalive_ms).unref();
  }

  private send(event: string, data: unknown): void {
    if (this.over) return;
    const res = this.reply.raw;
    if (res.writableLength > this.options.buffer_bytes) {
      this.write("error", {
        code: "stream_buffer_exceeded",
        message: "The stream was read too slowly and was ended; the execution goes on: read it by id.",
      });
      this.end();
      return;
    }
    this.write(event, data);
  }

  private write(event: string, data: unknown): void {
    this.reply.raw.write(`id: ${this.next_id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    this.next_id += 1;
  }

  private end(): void {
    if (this.over) return;
    this.over = true;
    clearInterval(this.keepalive);
    const res = this.reply.raw;
    if (!res.destroyed) res.end();
  }
}
