// An empty filtered result says what was asked for, so that "nothing" is not read as "nothing at
// all": "No refunded executions of Echo paid with the key cron (…1a2b)."
import type { ChainState } from "../data/executions.js";
import type { Range } from "../data/usage.js";

const RANGE_WORDS: Record<Range, string> = { "24h": "the last 24 hours", "7d": "the last 7 days", "30d": "the last 30 days" };

export interface AskedFor {
  /** The agent's label. */
  agent?: string;
  /** The key's label, or the wallet's web runs (which are paid with no key of its own). */
  key?: { label: string } | "web runs";
  state?: ChainState;
  range?: Range;
}

export function noMatch({ agent, key, state, range }: AskedFor): string {
  const words = [`No ${state === undefined ? "" : `${state.toLowerCase()} `}${key === "web runs" ? "web runs" : "executions"}`];
  if (agent !== undefined) words.push(`of ${agent}`);
  if (key !== undefined && key !== "web runs") words.push(`paid with the key ${key.label}`);
  if (range !== undefined) words.push(`in ${RANGE_WORDS[range]}`);
  return `${words.join(" ")}.`;
}
