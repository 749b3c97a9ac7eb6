// A tool call's output reported as it streams, per the MCP specification's progress flow: when the
// client's request carried `_meta.progressToken`, each piece of the output is one
// `notifications/progress` with that token, `progress` counting the pieces (it only increases; the
// total is unknown) and `message` the piece's text. The tool's result still holds the whole output.
import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** Reports the next piece of a streaming output. */
export type OutputProgress = (text: string) => Promise<void>;

export function outputProgress(token: ProgressToken, send: (notification: ServerNotification) => Promise<void>): OutputProgress {
  let pieces = 0;
  return async (text) => {
    pieces += 1;
    try {
      await send({ method: "notifications/progress", params: { progressToken: token, progress: pieces, message: text } });
    } catch {
      // A client gone or slow loses a progress note, not the paid call: its result still answers.
    }
  };
}
