// Dispatch, help and the one way failures are reported: the message and the next step on
// stderr, exit code 1 (2 for wrong usage). With --json, anywhere on the line, a result is one
// JSON document on stdout, and so is a failure: {"error":{"code","message","next"?,…}}, with the
// same exit codes.

import { AgentMarketError } from "@agent-market/client";

import { adviceFor } from "./advice.js";
import { admin } from "./commands/admin.js";
import { agents } from "./commands/agents.js";
import { allowance } from "./commands/allowance.js";
import { check } from "./commands/check.js";
import { dispute } from "./commands/dispute.js";
import { execute } from "./commands/execute.js";
import { executions } from "./commands/executions.js";
import { keyProof } from "./commands/key-proof.js";
import { keygen } from "./commands/keygen.js";
import { keys } from "./commands/keys.js";
import { login, logout } from "./commands/login.js";
import { mcp } from "./commands/mcp.js";
import { reclaim } from "./commands/reclaim.js";
import { register } from "./commands/register.js";
import { status } from "./commands/status.js";
import { subscribe } from "./commands/subscribe.js";
import { CliError, UsageError, type Command, type Io } from "./io.js";
import { version } from "./package-version.js";

export const COMMANDS: readonly Command[] = [
  keygen,
  keyProof,
  check,
  register,
  status,
  agents,
  login,
  logout,
  keys,
  allowance,
  execute,
  executions,
  mcp,
  subscribe,
  reclaim,
  dispute,
  admin,
];

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;


function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "usage: agent-market <command> [options] [--json]   (agent-market <command> --help for its options)",
    "       agent-market --version",
    "",
    "creators:  keygen, key-proof, check, register, status, agents",
    "consumers: login, logout, keys, allowance, execute, executions, mcp, subscribe, reclaim, dispute",
    "operators: admin",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
  ].join("\n");
}

interface Failure {
  code: number;
  error: { code: string; message: string; next?: string; request_id?: string; usage?: string };
}

function failure(error: unknown): Failure {
  if (error instanceof UsageError) return { code: EXIT_USAGE, error: { code: "usage", message: error.message, usage: error.usage } };
  if (error instanceof CliError) {
    return { code: EXIT_FAILURE, error: { code: "failed", message: error.message, ...(error.next ? { next: error.next } : {}) } };
  }
  if (error instanceof AgentMarketError) {
    const next = adviceFor(error);
    return {
      code: EXIT_FAILURE,
      error: { code: error.code, message: error.message, ...(error.requestId ? { request_id: error.requestId } : {}), ...(next ? { next } : {}) },
    };
  }
  return { code: EXIT_FAILURE, error: { code: "failed", message: error instanceof Error ? error.message : String(error) } };
}

/** Runs one command line; resolves with the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  const json = argv.includes("--json");
  const [name, ...args] = argv.filter((arg) => arg !== "--json");
  const report = (failed: Failure, text: string[]): number => {
    if (json) io.out(JSON.stringify({ error: failed.error }, null, 2));
    else for (const line of text) io.err(line);
    return failed.code;
  };
  if (name === "--version" || name === "-V") {
    io.out(json ? JSON.stringify({ version: version() }) : version());
    return EXIT_OK;
  }
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    if (name === undefined) return report({ code: EXIT_USAGE, error: { code: "usage", message: "no command", usage: overview() } }, [overview()]);
    io.out(overview());
    return EXIT_OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const message = `unknown command ${name}`;
    return report({ code: EXIT_USAGE, error: { code: "usage", message, usage: overview() } }, [`agent-market: ${message}\n\n${overview()}`]);
  }
  if (args.includes("--help") || args.includes("-h")) {
    io.out(command.usage);
    return EXIT_OK;
  }
  try {
    return (await command.run(args, { ...io, json })) ?? EXIT_OK;
  } catch (error) {
    const failed = failure(error);
    if (error instanceof UsageError) return report(failed, [`agent-market ${name}: ${error.message}\n\n${error.usage}`]);
    const e = failed.error;
    const detail = error instanceof AgentMarketError ? ` (${e.code}${e.request_id ? `, request ${e.request_id}` : ""})` : "";
    return report(failed, [`error: ${e.message}${detail}`, ...(e.next ? [`next: ${e.next}`] : [])]);
  }
}
