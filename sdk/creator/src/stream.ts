// A streamed answer (execute protocol 2, docs/execute-protocol.md): a handler that yields text
// chunks, the `text/event-stream` frames the kit answers with, and whether a request accepts them.

/**
 * What a streaming handler returns: an async generator of text chunks (`async function*`). The
 * output is their concatenation; a metered handler `return`s its units (a u64 bigint) at the end.
 */
export type ChunkStream = AsyncIterator<string, bigint | void, undefined>;

/** A `200 text/event-stream` answer: its SSE frames, written as they come. */
export interface ServiceStream {
  status: 200;
  stream: AsyncIterable<string>;
}

/** Whether a handler's return value is a chunk stream rather than an output (JSON data never is). */
export function isChunkStream(value: unknown): value is ChunkStream {
  return (
    typeof value === "object" &&
    value !== null &&
    Symbol.asyncIterator in value &&
    typeof (value as { next?: unknown }).next === "function"
  );
}

/** Whether the request's Accept header lists `text/event-stream` (the marketplace asks only then). */
export function acceptsEventStream(accept: string | string[] | undefined): boolean {
  const values = Array.isArray(accept) ? accept : accept === undefined ? [] : [accept];
  return values.some((value) =>
    value.split(",").some((range) => range.split(";", 1)[0]!.trim().toLowerCase() === "text/event-stream"),
  );
}

/** One SSE event: its name and one line of JSON (JSON.stringify never writes a raw newline). */
export function sseFrame(event: "output" | "result" | "error", data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
