#!/usr/bin/env node
// The metered-text-stats agent as a program: see cli.ts for its options.
import { meteredTextStatsListing, startMeteredTextStats } from "./agents/metered-text-stats.js";
import { runCli, runMain } from "./cli.js";

runMain(() => runCli("metered-text-stats", meteredTextStatsListing, startMeteredTextStats));
