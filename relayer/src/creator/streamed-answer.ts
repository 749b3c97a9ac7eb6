// A creator's streamed `/execute` answer (docs/execute-protocol.md, "Streamed answers"): `output`
// events carry the chunks, in order from seq 0, and are forwarded as they arrive; the one `result`
// event, last, carries the result hash and the signature over the whole output, which is the
// concatenation of the chunks (a JSON string, or with `format` "json" the JSON it spells). What
// was forwarded is therefore exactly what the signature must cover: nothing else is assembled.
import { EventStreamReader } from "./event-stream.js";

export interface OutputChunk {
  seq: number;
  text: string;
}

/** The answer a stream spelled, as a non-streamed answer's body, or why it spelled none. */
export type StreamedBody = { ok: true; body: Record<string, unknown> } | { ok: false; failure: "invalid_response" | "http_error"; message: string };

export function isEventStream(contentType: string | string[] | undefined): boolean {
  return typeof contentType === "string" && /^text\/event-stream\s*(;|$)/i.test(contentType);
}

function objectOf(data: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export class StreamedAnswer {
  private readonly reader = new EventStreamReader();
  private next_seq = 0;
  private text = "";
  private result: Record<string, unknown> | null = null;
  private fault: StreamedBody | null = null;

  constructor(private readonly forward: (chunk: OutputChunk) => void) {}

  /** Reads a piece of the body; chunks it completes are forwarded, until the first fault. */
  push(piece: Buffer): void {
    for (const { event, data } of this.reader.push(piece)) {
      if (this.fault) return;
      if (this.result) {
        this.fault = { ok: false, failure: "invalid_response", message: `a ${event} event followed the result event` };
        return;
      }
      if (event === "output") this.chunk(data);
      else if (event === "result") this.result = objectOf(data) ?? {};
      else if (event === "error") {
        const error = objectOf(data);
        const code = typeof error?.code === "string" ? error.code.slice(0, 64) : "error";
        this.fault = { ok: false, failure: "http_error", message: `the stream ended with the creator's error ${code}` };
      }
      // Other event names are left for later versions of the protocol.
    }
  }

  private chunk(data: string): void {
    const chunk = objectOf(data);
    if (chunk?.seq !== this.next_seq || typeof chunk.text !== "string") {
      this.fault = {
        ok: false,
        failure: "invalid_response",
        message: `output event ${this.next_seq} is not {"seq": ${this.next_seq}, "text": <string>}`,
      };
      return;
    }
    this.next_seq += 1;
    this.text += chunk.text;
    this.forward({ seq: chunk.seq, text: chunk.text });
  }

  /** Once the body is whole: the answer to verify, with the output the chunks spell. */
  finish(): StreamedBody {
    if (this.fault) return this.fault;
    if (!this.result) return { ok: false, failure: "invalid_response", message: "the stream ended without a result event" };
    const { format = "text", ...answer } = this.result;
    if (format === "text") return { ok: true, body: { ...answer, output: this.text } };
    if (format !== "json") return { ok: false, failure: "invalid_response", message: `format ${JSON.stringify(format)} is neither "text" nor "json"` };
    try {
      return { ok: true, body: { ...answer, output: JSON.parse(this.text) as unknown } };
    } catch {
      return { ok: false, failure: "invalid_response", message: "the chunks of a json stream do not spell JSON" };
    }
  }
}
