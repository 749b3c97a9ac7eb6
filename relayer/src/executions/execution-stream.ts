// Where a streamed execution's progress goes while it runs (the caller's event stream): the
// escrow's opening, then each chunk of the creator's output as it arrives. The run never waits on
// it: a slow or gone reader is the stream's to handle, and the execution finishes regardless.
import type { OutputChunk } from "../creator/streamed-answer.js";
import type { ExecutionRow } from "./execution-row.js";

export interface ExecutionStream {
  /** The escrow is open and the creator is about to be called: the row with the escrow's facts. */
  opened(row: ExecutionRow): void;
  output(chunk: OutputChunk): void;
}
