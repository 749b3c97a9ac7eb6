// Server-sent events read as the bytes arrive, for `check`'s streamed probe: lines end in CRLF, LF
// or CR, `data:` lines of one event join with "\n", comments (":", keep-alives) and other fields
// are skipped, and an event cut off by the end of the stream is dropped. (@agent-market/client
// parses the API's streams with its own reader, which it does not export.)

export interface ServerSentEvent {
  /** The `event:` field; "message" when the event names none. */
  event: string;
  /** The `data:` lines, joined with "\n". */
  data: string;
}

export async function* serverSentEvents(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent, void, undefined> {
  const decoder = new TextDecoder("utf-8");
  let buffered = "";
  let event = "";
  let data: string[] = [];
  for await (const chunk of bytes) {
    buffered += decoder.decode(chunk, { stream: true });
    // A CR at the very end may be half of a CRLF: it waits for the next chunk.
    const lines = buffered.split(/\r\n|\r(?!$)|\n/);
    buffered = lines.pop()!;
    for (const line of lines) {
      if (line === "") {
        if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
        event = "";
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
  }
}
