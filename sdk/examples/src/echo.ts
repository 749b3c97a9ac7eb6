#!/usr/bin/env node
// The echo agent as a program: see cli.ts for its options.
import { echoListing, startEcho } from "./agents/echo.js";
import { runCli, runMain } from "./cli.js";

runMain(() => runCli("echo", echoListing, startEcho));
