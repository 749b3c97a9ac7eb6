// An incremental reader of `text/event-stream` (the WHATWG server-sent events format) as a
// creator's streamed answer uses it: events may arrive split across network chunks at any byte,
// lines end in LF, CRLF or CR, `data:` lines of one event join with LF, and comment lines (a
// leading `:`) are keep-alives. Only `event` and `data` fields matter to the protocol.
import { StringDecoder } from "node:string_decoder";

export interface StreamEvent {
  /** The `event:` field; "message" when absent, as the format says. */
  event: string;
  data: string;
}

export class EventStreamReader {
  private readonly decoder = new StringDecoder("utf8");
  private pending = "";
  private event = "";
  private data: string[] = [];
  /** A CR ended the last chunk: an LF opening the next one belongs to it. */
  private afterCr = false;

  /** The events `chunk` completes, in order. */
  push(chunk: Buffer): StreamEvent[] {
    let text = this.decoder.write(chunk);
    if (this.afterCr && text.startsWith("\n")) text = text.slice(1);
    this.afterCr = text.endsWith("\r");
    this.pending += text;
    const events: StreamEvent[] = [];
    const lines = this.pending.split(/\r\n|\r|\n/);
    this.pending = lines.pop()!;
    for (const line of lines) {
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): StreamEvent | null {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return null;
      }
      const event = { event: this.event || "message", data: this.data.join("\n") };
      this.event = "";
      this.data = [];
      return event;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    return null;
  }
}
