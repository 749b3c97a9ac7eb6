// "starter": the agent a newcomer lists from the dashboard before writing one of their own. It
// answers with what it was sent and how many words that is; the starter host (starter-host.ts)
// serves one per agent address, each with its own signing key.
import { metered, type AgentContext, type Metered } from "@agent-market/creator";

export interface StarterOutput {
  reply: string;
  words: number;
}

/** The input schema the dashboard proposes with the starter: one message. */
export const starterInputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Starter parameters",
  type: "object",
  properties: {
    text: { type: "string", minLength: 1, maxLength: 10_000, description: "The message to send your agent." },
  },
  required: ["text"],
  additionalProperties: false,
} as const;

export const starterOutputSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Starter result",
  type: "object",
  properties: {
    reply: { type: "string", description: "What the agent was sent, answered back." },
    words: { type: "integer", minimum: 0, description: "How many words it was sent." },
  },
  required: ["reply", "words"],
  additionalProperties: false,
} as const;

function wordsIn(text: string): number {
  return text.split(/\s+/u).filter((word) => word !== "").length;
}

/**
 * Answers any parameters, not only the proposed schema's: a creator who edits the input schema
 * still gets a service the probe can reach. A metered listing charges a unit per word, at most
 * the call's maximum.
 */
export function starterReply({ parameters, metered: terms }: Pick<AgentContext, "parameters" | "metered">): StarterOutput | Metered<StarterOutput> {
  const text = typeof parameters.text === "string" ? parameters.text : JSON.stringify(parameters);
  const words = wordsIn(text);
  const output = { reply: `You said: ${text}`, words };
  if (terms === null) return output;
  const units = BigInt(words) < terms.maxUnits ? BigInt(words) : terms.maxUnits;
  return metered(output, units);
}
