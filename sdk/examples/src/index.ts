// @agent-market/examples: agents built with @agent-market/creator, to run, test against and copy.
import type { ListingDocument } from "@agent-market/creator";

import { echoListing, startEcho } from "./agents/echo.js";
import { meteredTextStatsListing, meteredTextStatsPricing, startMeteredTextStats } from "./agents/metered-text-stats.js";
import { startTextStats, textStatsListing } from "./agents/text-stats.js";
import { startWordStream, wordStreamListing } from "./agents/word-stream.js";
import type { ExamplePricing } from "./pricing.js";
import type { RunningAgent, StartOptions } from "./start.js";

export * from "./agents/echo.js";
export * from "./agents/starter.js";
export * from "./agents/metered-text-stats.js";
export * from "./agents/text-stats.js";
export * from "./agents/word-stream.js";
export type { ExamplePricing } from "./pricing.js";
export { ENGLISH_STOPWORDS } from "./agents/stopwords.js";
export { startAgent, type RunningAgent, type StartOptions } from "./start.js";
export {
  DEFAULT_STARTER_AGENTS_PER_CREATOR,
  MAX_STARTER_AGENTS,
  startStarterHost,
  type RunningStarterHost,
  type StarterHostOptions,
  type StarterKey,
} from "./starter-host.js";

export interface ExampleAgent {
  listing: ListingDocument;
  /** What a local marketplace lists and registers it at. */
  pricing: ExamplePricing;
  start(options: StartOptions): Promise<RunningAgent>;
}

/** Every example agent by its slug, for a local marketplace to register and start them all. */
export const exampleAgents: Readonly<
  Record<"echo" | "text-stats" | "metered-text-stats" | "word-stream", ExampleAgent>
> = {
  echo: { listing: echoListing, pricing: { model: "pay_per_use", price_usdc: "0.010000" }, start: startEcho },
  "text-stats": { listing: textStatsListing, pricing: { model: "pay_per_use", price_usdc: "0.050000" }, start: startTextStats },
  "metered-text-stats": { listing: meteredTextStatsListing, pricing: meteredTextStatsPricing, start: startMeteredTextStats },
  "word-stream": { listing: wordStreamListing, pricing: { model: "pay_per_use", price_usdc: "0.010000" }, start: startWordStream },
};
