// "word-stream": a streaming agent. It yields `count` deterministic words, one every `delay_ms`
// (WORD_DELAY_MS unless the caller names another pause), so that a caller who asked for a stream
// sees them arrive one by one; a caller who did not gets the same text at once. A fixture for
// streamed executions end to end, and for their benchmark (npm run bench:stream), which sends
// words without pause.
import type { AgentContext, ListingDocument } from "@agent-market/creator";

import { startAgent, type RunningAgent, type StartOptions } from "../start.js";

/** The pause before each word after the first, by default: long enough to see, short enough for tests. */
export const WORD_DELAY_MS = 20;
/** The longest pause a caller may ask for: the whole call stays within a few minutes. */
export const MAX_WORD_DELAY_MS = 1_000;

const VOCABULARY = [
  "once", "upon", "a", "time", "the", "agent", "wrote", "one", "word", "after", "another",
  "and", "every", "word", "arrived", "before", "the", "next", "was", "written",
] as const;

export interface WordStreamParameters {
  /** How many words to write. */
  count: number;
  /** The pause before each word after the first. */
  delay_ms: number;
}

export const wordStreamInputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Word stream parameters",
  type: "object",
  properties: {
    count: { type: "integer", minimum: 1, maximum: 200, default: 20, description: "How many words to write." },
    delay_ms: {
      type: "integer",
      minimum: 0,
      maximum: MAX_WORD_DELAY_MS,
      default: WORD_DELAY_MS,
      description: "The pause before each word after the first, in milliseconds.",
    },
  },
  additionalProperties: false,
} as const;

export const wordStreamOutputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Word stream result",
  description: "The words, separated by single spaces.",
  type: "string",
} as const;

export const wordStreamListing: ListingDocument = {
  name: "Word stream",
  description:
    "Writes a given number of words, one every 20 ms (or the pause asked), streamed as they are written when the caller asks " +
    "for a stream. Deterministic: the task picks where in its vocabulary the words start. For testing streamed calls.",
  tags: ["test", "streaming", "deterministic"],
  input_schema: wordStreamInputSchema,
  output_schema: wordStreamOutputSchema,
};

/** The words a call writes: the vocabulary from an offset the task decides, `count` of them. */
export function streamWords(task: string, count: number): string[] {
  let offset = 0;
  for (const char of task) offset = (offset + char.codePointAt(0)!) % VOCABULARY.length;
  return Array.from({ length: count }, (_, i) => VOCABULARY[(offset + i) % VOCABULARY.length]!);
}

/** Resolves after `ms`, or at once when `signal` fires (the handler then stops). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Yields the words with a space between them, one every `delay_ms`, until done or aborted. */
export async function* wordStream({
  task,
  parameters,
  signal,
}: Pick<AgentContext<WordStreamParameters>, "task" | "parameters" | "signal">): AsyncGenerator<string> {
  const words = streamWords(task, parameters.count);
  for (const [i, word] of words.entries()) {
    if (i > 0 && parameters.delay_ms > 0) await pause(parameters.delay_ms, signal);
    if (signal.aborted) return;
    yield i === 0 ? word : ` ${word}`;
  }
}

export function startWordStream(options: StartOptions): Promise<RunningAgent> {
  return startAgent<WordStreamParameters, string>(
    { inputSchema: wordStreamInputSchema, outputSchema: wordStreamOutputSchema, handler: wordStream },
    options,
  );
}
