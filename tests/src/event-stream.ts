// The tests' reader of a relayer's event stream: every event of a `text/event-stream` response, as
// it arrives (a caller's view), with its id, name and parsed data, read by the client package's
// own parser.
import { serverSentEvents } from "@agent-market/client";

export interface ReadEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

export async function* readEvents(response: Response): AsyncGenerator<ReadEvent> {
  for await (const { id, event, data } of serverSentEvents(response.body as unknown as AsyncIterable<Uint8Array>)) {
    yield { id, event, data: JSON.parse(data) as unknown };
  }
}
