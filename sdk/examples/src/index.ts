// @agent-market/examples: two agents built with @agent-market/creator, to run, test against and copy.
import type { ListingDocument } from "@agent-market/creator";

import { echoListing, startEcho } from "./agents/echo.js";
import { startTextStats, textStatsListing } from "./agents/text-stats.js";
import type { RunningAgent, StartOptions } from "./start.js";

export * from "./agents/echo.js";
export * from "./agents/text-stats.js";
export { ENGLISH_STOPWORDS } from "./agents/stopwords.js";
export { startAgent, type RunningAgent, type StartOptions } from "./start.js";

export interface ExampleAgent {
  listing: ListingDocument;
  start(options: StartOptions): Promise<RunningAgent>;
}

/** Every example agent by its slug, for a local marketplace to register and start them all. */
export const exampleAgents: Readonly<Record<"echo" | "text-stats", ExampleAgent>> = {
  echo: { listing: echoListing, start: startEcho },
  "text-stats": { listing: textStatsListing, start: startTextStats },
};
