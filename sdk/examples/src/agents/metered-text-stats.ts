// "metered-text-stats": text-stats's figures as a metered agent, charged per 100 words it
// measures (a started hundred counts whole), so a short text costs less than a long one.
import { metered, type AgentContext, type ListingDocument, type Metered } from "@agent-market/creator";

import type { ExamplePricing } from "../pricing.js";
import { startAgent, type RunningAgent, type StartOptions } from "../start.js";
import {
  textStats,
  textStatsInputSchema,
  textStatsOutputSchema,
  wordCount,
  type TextStats,
  type TextStatsParameters,
} from "./text-stats.js";

export const WORDS_PER_UNIT = 100;

export const meteredTextStatsListing: ListingDocument = {
  name: "Text statistics, per 100 words",
  description:
    "The figures of Text statistics (counts, reading time, Flesch reading ease, the most frequent words) " +
    "charged per 100 words of the text: a started hundred counts whole. Deterministic.",
  tags: ["statistics", "readability", "nlp", "deterministic", "metered"],
  input_schema: textStatsInputSchema,
  output_schema: textStatsOutputSchema,
};

/** 0.001 USDC per 100 words, 10 000 words (0.1 USDC) at most in one call. */
export const meteredTextStatsPricing: ExamplePricing = {
  model: "metered",
  price_per_unit_usdc: "0.001000",
  unit: "100 words",
  max_units_per_call: "100",
};

/** The units a text is charged: its words by the hundred, rounded up. */
export function textUnits(text: string): bigint {
  return BigInt(Math.ceil(wordCount(text) / WORDS_PER_UNIT));
}

/**
 * Measures the text and answers its units; a text of more units than the call pays for is
 * refused before any work (the kit would not sign them anyway, and the call is refunded).
 */
export function meteredTextStatsHandler({
  parameters,
  metered: terms,
}: Pick<AgentContext<TextStatsParameters>, "parameters" | "metered">): Metered<TextStats> {
  const units = textUnits(parameters.text);
  if (terms !== null && units > terms.maxUnits) {
    throw new Error(
      `the text is ${units} units of ${WORDS_PER_UNIT} words; this call pays for at most ${terms.maxUnits} ` +
        `(${terms.maxUnits * BigInt(WORDS_PER_UNIT)} words)`,
    );
  }
  return metered(textStats(parameters.text, parameters), units);
}

export function startMeteredTextStats(options: StartOptions): Promise<RunningAgent> {
  return startAgent(
    { inputSchema: textStatsInputSchema, outputSchema: textStatsOutputSchema, handler: meteredTextStatsHandler },
    options,
  );
}
