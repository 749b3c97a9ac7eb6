import { strict as assert } from "node:assert";

import { serverSentEvents, type ServerSentEvent } from "../src/event-stream.js";

async function* pieces(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
}

async function parse(text: string, cuts: number[] = []): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of serverSentEvents(pieces(new TextEncoder().encode(text), cuts))) events.push(event);
  return events;
}

describe("serverSentEvents", () => {
  // Multi-byte characters, CRLF, a comment, multi-line data and an id: every case the stream can split inside.
  const TEXT =
    "\uFEFF: keep-alive\r\n\r\nid: 0\r\nevent: output\r\ndata: {\"seq\":0,\"text\":\"héllo 🌍\"}\r\n\r\n" +
    "id: 1\nevent: output\ndata:{\"seq\":1,\ndata: \"text\":\"\\n\"}\n\n" +
    "id: 2\revent: completed\rdata: {}\r\r";
  const EXPECTED: ServerSentEvent[] = [
    { event: "output", data: '{"seq":0,"text":"héllo 🌍"}', id: "0" },
    { event: "output", data: '{"seq":1,\n"text":"\\n"}', id: "1" },
    { event: "completed", data: "{}", id: "2" },
  ];

  it("reads events, whatever their line endings, skipping comments and joining data lines", async () => {
    assert.deepEqual(await parse(TEXT), EXPECTED);
  });

  it("reads the same events however the bytes are split: at every byte, and byte by byte", async () => {
    const length = new TextEncoder().encode(TEXT).length;
    for (let cut = 0; cut <= length; cut++) assert.deepEqual(await parse(TEXT, [cut]), EXPECTED, `cut at byte ${cut}`);
    assert.deepEqual(await parse(TEXT, Array.from({ length }, (_, i) => i)), EXPECTED);
  });

  it("names an unnamed event message, drops one without data, and drops an event cut off by the end", async () => {
    assert.deepEqual(await parse("data: a\n\nevent: ping\n\nretry: 10\nunknown: x\ndata: b\n\nevent: output\ndata: cut"), [
      { event: "message", data: "a", id: undefined },
      { event: "message", data: "b", id: undefined },
    ]);
  });
});
