// The relayer checks a run's parameters against the agent's input schema and refuses the first
// fault as `validation_failed` with `param` "parameters.<field>" and Ajv's words ("parameters.top_n
// must be <= 50."). The run form shows it beside that field, as its own checks are, in plain words.
import { AgentMarketError } from "@agent-market/client";

export interface FieldRefusal {
  /** The top-level parameter the fault is in: the form's field. */
  field: string;
  problem: string;
}

const TYPES: Record<string, string> = {
  integer: "a whole number",
  number: "a number",
  string: "text",
  boolean: "yes or no",
  object: "a JSON object",
  array: "a JSON list",
  null: "empty",
};

const PHRASES: [RegExp, (...groups: string[]) => string][] = [
  [/^must be <= (.+)$/, (n) => `Must be ${n} or less.`],
  [/^must be < (.+)$/, (n) => `Must be less than ${n}.`],
  [/^must be >= (.+)$/, (n) => `Must be ${n} or more.`],
  [/^must be > (.+)$/, (n) => `Must be more than ${n}.`],
  [/^must be multiple of (.+)$/, (n) => `Must be a multiple of ${n}.`],
  [/^must be (\w+)$/, (type) => `Must be ${TYPES[type] ?? type}.`],
  [/^must have required property/, () => "Required: fill it in."],
  [/^must be equal to one of the allowed values$/, () => "Must be one of the listed choices."],
  [/^must be equal to constant$/, () => "Must be the one value this agent accepts."],
  [/^must NOT have more than (\d+) characters$/, (n) => `Must be at most ${n} characters.`],
  [/^must NOT have fewer than (\d+) characters$/, (n) => `Must be at least ${n} characters.`],
  [/^must NOT have more than (\d+) items$/, (n) => `Must have at most ${n} items.`],
  [/^must NOT have fewer than (\d+) items$/, (n) => `Must have at least ${n} items.`],
  [/^must match pattern/, () => "Is not in the form this agent expects."],
  [/^must match format "(.+)"$/, (format) => `Must be a valid ${format}.`],
];

/** Ajv's message ("must be <= 50") as a sentence for beside the field. */
export function schemaWords(message: string): string {
  for (const [pattern, words] of PHRASES) {
    const match = pattern.exec(message);
    if (match) return words(...match.slice(1));
  }
  return `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
}

/** The field a refusal is about and what is wrong with it, or null when it names no parameter. */
export function parameterRefusal(error: unknown): FieldRefusal | null {
  if (!(error instanceof AgentMarketError) || error.code !== "validation_failed" || error.param?.startsWith("parameters.") !== true) return null;
  const [field, ...inside] = error.param.slice("parameters.".length).split(".");
  const message = error.message.startsWith(`${error.param} `) ? error.message.slice(error.param.length + 1).replace(/\.$/, "") : error.message;
  const words = schemaWords(message);
  return { field: field!, problem: inside.length === 0 ? words : `In ${inside.join(".")}: ${words}` };
}
