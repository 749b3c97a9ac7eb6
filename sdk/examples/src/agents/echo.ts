// "echo": answers what it was asked, deterministically. A fixture for tests of the whole path
// from the marketplace to the creator and back.
import type { AgentContext, ListingDocument } from "@agent-market/creator";

import { startAgent, type RunningAgent, type StartOptions } from "../start.js";

export interface EchoOutput {
  task: string;
  parameters: Record<string, unknown>;
  /** The task's length in Unicode code points. */
  length: number;
}

export const echoInputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Echo parameters",
  description: "Any JSON object; it is returned unchanged.",
  type: "object",
} as const;

export const echoOutputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Echo result",
  type: "object",
  properties: {
    task: { type: "string", description: "The task, unchanged." },
    parameters: { type: "object", description: "The parameters, unchanged." },
    length: { type: "integer", minimum: 0, description: "The task's length in Unicode code points." },
  },
  required: ["task", "parameters", "length"],
  additionalProperties: false,
} as const;

export const echoListing: ListingDocument = {
  name: "Echo",
  description:
    "Returns the task and parameters it was given, and the task's length. Deterministic; for testing integrations.",
  tags: ["test", "echo", "deterministic"],
  input_schema: echoInputSchema,
  output_schema: echoOutputSchema,
};

export function echo({ task, parameters }: Pick<AgentContext, "task" | "parameters">): EchoOutput {
  return { task, parameters, length: [...task].length };
}

export function startEcho(options: StartOptions): Promise<RunningAgent> {
  return startAgent({ inputSchema: echoInputSchema, outputSchema: echoOutputSchema, handler: echo }, options);
}
