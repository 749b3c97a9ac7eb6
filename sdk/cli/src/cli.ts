// Dispatch, help and the one way failures are reported: the message and the next step on
// stderr, exit code 1 (2 for wrong usage).
import { AgentMarketError } from "@agent-market/client";

import { adviceFor } from "./advice.js";
import { allowance } from "./commands/allowance.js";
import { check } from "./commands/check.js";
import { execute } from "./commands/execute.js";
import { keygen } from "./commands/keygen.js";
import { keys } from "./commands/keys.js";
import { login, logout } from "./commands/login.js";
import { register } from "./commands/register.js";
import { status } from "./commands/status.js";
import { CliError, UsageError, type Command, type Io } from "./io.js";

export const COMMANDS: readonly Command[] = [keygen, check, register, status, login, logout, keys, allowance, execute];

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "usage: agent-market <command> [options]   (agent-market <command> --help for its options)",
    "",
    "creators:  keygen, check, register, status",
    "consumers: login, logout, keys, allowance, execute",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
  ].join("\n");
}

/** Runs one command line; resolves with the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    (name === undefined ? io.err : io.out)(overview());
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err(`agent-market: unknown command ${name}\n\n${overview()}`);
    return EXIT_USAGE;
  }
  if (args.includes("--help") || args.includes("-h")) {
    io.out(command.usage);
    return EXIT_OK;
  }
  try {
    return (await command.run(args, io)) ?? EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`agent-market ${name}: ${error.message}\n\n${error.usage}`);
      return EXIT_USAGE;
    }
    if (error instanceof CliError) {
      io.err(`error: ${error.message}`);
      if (error.next) io.err(`next: ${error.next}`);
      return EXIT_FAILURE;
    }
    if (error instanceof AgentMarketError) {
      io.err(`error: ${error.message} (${error.code}${error.requestId ? `, request ${error.requestId}` : ""})`);
      const next = adviceFor(error);
      if (next) io.err(`next: ${next}`);
      return EXIT_FAILURE;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_FAILURE;
  }
}
