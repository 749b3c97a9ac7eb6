#!/usr/bin/env node
// The agent-market command.
import { run } from "./cli.js";

const code = await run(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  write: (text) => process.stdout.write(text),
  env: process.env,
});
// Exits rather than waiting for the event loop to drain: web3.js keeps the websocket it
// confirmed a transaction over open. Waits for stdout first, which a pipe may still be taking.
process.stdout.write("", () => process.exit(code));
