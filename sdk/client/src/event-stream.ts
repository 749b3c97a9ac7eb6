// Server-sent events, parsed as the bytes arrive (the WHATWG "event stream interpretation"): an
// event may be split across network chunks anywhere, even inside a UTF-8 character or between the
// CR and LF of a line break; lines end in CRLF, LF or CR; `data:` lines of one event join with
// "\n"; comment lines (":", the keep-alives) and unknown fields are skipped. Our own parser rather
// than EventSource, which can only GET and cannot send the Authorization header.

export interface ServerSentEvent {
  /** The `event:` field; "message" when the event names none. */
  event: string;
  /** The `data:` lines, joined with "\n". */
  data: string;
  /** The last `id:` seen so far, as the spec carries it over to later events. */
  id: string | undefined;
}

/** Complete lines out of text that arrives in pieces. */
class LineSplitter {
  private partial = "";
  /** The previous piece ended in CR: an LF starting the next one is the same line break. */
  private skipLineFeed = false;

  push(text: string): string[] {
    if (text === "") return [];
    if (this.skipLineFeed && text.startsWith("\n")) text = text.slice(1);
    const buffer = this.partial + text;
    this.skipLineFeed = buffer.endsWith("\r");
    const lines = buffer.split(/\r\n|\r|\n/);
    this.partial = lines.pop()!;
    return lines;
  }
}

export async function* serverSentEvents(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent, void, undefined> {
  // Strips a leading BOM and holds back a character split across chunks.
  const decoder = new TextDecoder("utf-8");
  const splitter = new LineSplitter();
  let event = "";
  let data: string[] = [];
  let id: string | undefined;
  for await (const chunk of bytes) {
    for (const line of splitter.push(decoder.decode(chunk, { stream: true }))) {
      if (line === "") {
        // A blank line dispatches; an event without data (a lone `event:`) is dropped, as the spec says.
        if (data.length > 0) yield { event: event || "message", data: data.join("\n"), id };
        event = "";
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
      else if (field === "id" && !value.includes("\0")) id = value;
    }
  }
  // What follows the last blank line is an event cut off by the end of the stream: the spec drops it.
}
