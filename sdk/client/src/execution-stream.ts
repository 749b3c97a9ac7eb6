// A streamed execution: the output's chunks as the creator sends them, then its outcome. The
// events (docs/api.md): `execution` once the escrow is open, `output` per chunk, then `completed`
// (the final execution, as GET /v1/executions/:id gives it), `refunded` or `error` (the stream
// ended early; the execution goes on). The body is read as it arrives whether or not anyone
// iterates, so awaiting `result` alone works and a slow consumer never holds the API's stream up.
import { serverSentEvents } from "./event-stream.js";
import { ConnectionError, ExecutionFailedError, StreamInterruptedError } from "./errors.js";
import type { StreamResponse } from "./http.js";
import type { Execution, OutputChunk } from "./types.js";

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Its failure is thrown to the iterator too: a caller that only iterates must not see an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

function isExecution(value: unknown): value is Execution {
  return typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string";
}

/** The text an output streams as when its creator answered at once: a string as is, else its JSON. */
export function outputText(output: unknown): string {
  return typeof output === "string" ? output : JSON.stringify(output);
}

export class ExecutionStream implements AsyncIterable<OutputChunk> {
  private readonly openedAt = deferred<Execution>();
  private readonly resultAt = deferred<Execution>();
  private readonly chunks: OutputChunk[] = [];
  private end: { error: unknown } | "completed" | undefined;
  private waiting: (() => void)[] = [];

  private constructor() {}

  /**
   * The execution once its escrow is open (status `running`): its id, to read it later even if the
   * stream breaks. Rejects as `result` does when the stream fails before that.
   */
  get opened(): Promise<Execution> {
    return this.openedAt.promise;
  }

  /**
   * The final execution (`succeeded`, with its output, charge and receipt: check it with
   * verifyReceipt). Rejects with ExecutionFailedError when the escrow was refunded (it carries the
   * execution and the refund's transaction), StreamInterruptedError when the stream ended before
   * the outcome, or the abort reason when the caller aborted.
   */
  get result(): Promise<Execution> {
    return this.resultAt.promise;
  }

  /**
   * The chunks from the first, as they arrive; ends at the final execution, throws what `result`
   * rejects with. Each iteration starts over from the first chunk; breaking out of one stops
   * neither the stream nor the execution.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<OutputChunk, void, undefined> {
    for (let at = 0; ; ) {
      if (at < this.chunks.length) yield this.chunks[at++]!;
      else if (this.end === "completed") return;
      else if (this.end !== undefined) throw this.end.error;
      else await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** The events of an event-stream answer, read from now on. */
  static fromEvents(stream: StreamResponse): ExecutionStream {
    const target = new ExecutionStream();
    void target.read(stream);
    return target;
  }

  /**
   * An API that answered JSON though asked for a stream (a replay's answer, a relayer from before
   * streams): the final execution at once, its output as one chunk, as the API streams a creator
   * that does not.
   */
  static fromExecution(execution: Execution): ExecutionStream {
    const target = new ExecutionStream();
    if (execution.output !== null && execution.output !== undefined) target.push({ seq: 0, text: outputText(execution.output) });
    target.complete(execution);
    return target;
  }

  private wakeAll(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }

  private push(chunk: OutputChunk): void {
    this.chunks.push(chunk);
    this.wakeAll();
  }

  private complete(execution: Execution): void {
    this.openedAt.resolve(execution);
    this.resultAt.resolve(execution);
    this.end = "completed";
    this.wakeAll();
  }

  private fail(error: unknown): void {
    this.openedAt.reject(error);
    this.resultAt.reject(error);
    this.end = { error };
    this.wakeAll();
  }

  private async read(stream: StreamResponse): Promise<void> {
    const requestId = stream.headers.get("request-id") ?? undefined;
    let executionId: string | undefined;
    const interrupted = (code: string, message: string, cause?: unknown) =>
      new StreamInterruptedError({ status: stream.status, code, type: "api_error", message, requestId, executionId, cause });
    try {
      for await (const { event, data } of serverSentEvents(stream.bytes)) {
        // Events this client does not know are the API's later additions: skipped.
        if (!["execution", "output", "completed", "refunded", "error"].includes(event)) continue;
        let payload: Record<string, unknown>;
        try {
          payload = JSON.parse(data) as Record<string, unknown>;
        } catch {
          return this.fail(interrupted("invalid_response", `the stream's ${event} event does not carry JSON`));
        }
        switch (event) {
          case "execution":
            if (!isExecution(payload)) return this.fail(interrupted("invalid_response", "the stream's execution event carries no execution"));
            executionId = payload.id;
            this.openedAt.resolve(payload);
            break;
          case "output":
            // In order and without gaps, or the text shown would not be the output paid for.
            if (payload.seq !== this.chunks.length || typeof payload.text !== "string") {
              return this.fail(interrupted("invalid_response", `the stream's output chunk ${String(payload.seq)} is not chunk ${this.chunks.length}`));
            }
            this.push({ seq: payload.seq, text: payload.text });
            break;
          case "completed":
            if (!isExecution(payload)) return this.fail(interrupted("invalid_response", "the stream's completed event carries no execution"));
            return this.complete(payload);
          case "refunded": {
            const { code, message, execution, ...details } = payload;
            if (!isExecution(execution)) return this.fail(interrupted("invalid_response", "the stream's refunded event carries no execution"));
            return this.fail(
              new ExecutionFailedError({
                status: stream.status,
                code: String(code),
                type: "api_error",
                message: String(message),
                requestId,
                details: { ...details, execution },
                execution,
              }),
            );
          }
          case "error":
            return this.fail(interrupted(String(payload.code), String(payload.message)));
        }
      }
      this.fail(interrupted("stream_ended", "the stream ended before the execution's outcome"));
    } catch (error) {
      // A broken or silent connection is this stream's end, not the execution's.
      this.fail(error instanceof ConnectionError ? interrupted(error.code, error.message, error) : error);
    }
  }
}
