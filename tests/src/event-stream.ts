// The tests' reader of a relayer's event stream: every event of a `text/event-stream` response, as
// it arrives (a caller's view), with its id, name and parsed data.
export interface ReadEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

export async function* readEvents(response: Response): AsyncGenerator<ReadEvent> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(piece, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      if (fields.has("data")) yield { id: fields.get("id"), event: fields.get("event") ?? "message", data: JSON.parse(fields.get("data")!) };
    }
  }
}
