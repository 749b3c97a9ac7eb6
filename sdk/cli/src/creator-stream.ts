// A creator's streamed answer (execute protocol 2), read and judged as the marketplace judges it:
// `output` events with consecutive seq from 0, then exactly one `result`, last, whose signature
// covers the concatenation of what was streamed (a "text" output is that string, a "json" one its
// parse). A stream whose result was signed over anything else is refused, as it would be refunded.
import { serverSentEvents } from "@agent-market/client";
import { verifyCreatorResponse, type CreatorExecuteRequest, type CreatorResponseCheck } from "@agent-market/program";

export type StreamReading =
  /** The events broke the protocol before a result could be judged. */
  | { ok: false; order: string }
  | { ok: true; chunks: number; format: "text" | "json"; output: unknown; check: CreatorResponseCheck };

/** Checks an answer to `request` as the relayer does: its escrow, the key, a metered max_units. */
export function verifyAnswer(body: unknown, request: CreatorExecuteRequest, signingKey: Uint8Array): CreatorResponseCheck {
  return verifyCreatorResponse(body, { ...request, signing_key: signingKey });
}

export async function readCreatorStream(
  bytes: AsyncIterable<Uint8Array>,
  request: CreatorExecuteRequest,
  signingKey: Uint8Array,
): Promise<StreamReading> {
  let text = "";
  let chunks = 0;
  let result: Record<string, unknown> | undefined;
  for await (const { event, data } of serverSentEvents(bytes)) {
    // Events the protocol does not name are later additions: skipped, as the relayer skips them.
    if (!["output", "result", "error"].includes(event)) continue;
    if (result !== undefined) return { ok: false, order: `an ${event} event came after the result, which must be last` };
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return { ok: false, order: `an ${event} event's data is not JSON` };
    }
    if (event === "error") {
      return { ok: false, order: `the service ended the stream with error ${String(payload.code)}: ${String(payload.message)}` };
    }
    if (event === "result") {
      result = payload;
      continue;
    }
    if (payload.seq !== chunks) return { ok: false, order: `output event ${chunks} carries seq ${String(payload.seq)}` };
    if (typeof payload.text !== "string") return { ok: false, order: `output event ${chunks}'s text is not a string` };
    text += payload.text;
    chunks += 1;
  }
  if (result === undefined) return { ok: false, order: `the stream ended after ${chunks} output events without a result` };
  const format = result.format ?? "text";
  if (format !== "text" && format !== "json") return { ok: false, order: `the result's format is ${String(format)}, not text or json` };
  let output: unknown = text;
  if (format === "json") {
    try {
      output = JSON.parse(text);
    } catch {
      return { ok: false, order: `the result's format is json, and the ${chunks} chunks together are not JSON` };
    }
  }
  // The output judged is what was streamed, whatever else the result carries.
  return { ok: true, chunks, format, output, check: verifyAnswer({ ...result, output }, request, signingKey) };
}
