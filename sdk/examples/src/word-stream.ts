#!/usr/bin/env node
// The word-stream agent as a program: see cli.ts for its options.
import { runCli, runMain } from "./cli.js";
import { startWordStream, wordStreamListing } from "./agents/word-stream.js";

runMain(() => runCli("word-stream", wordStreamListing, startWordStream));
