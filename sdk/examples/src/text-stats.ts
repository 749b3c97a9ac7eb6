#!/usr/bin/env node
// The text-stats agent as a program: see cli.ts for its options.
import { startTextStats, textStatsListing } from "./agents/text-stats.js";
import { runCli, runMain } from "./cli.js";

runMain(() => runCli("text-stats", textStatsListing, startTextStats));
