// What a command reads and writes, passed in so tests can run commands in-process.

export interface Io {
  /** A line for stdout: results, and tables. */
  out(line: string): void;
  /** A line for stderr: progress, errors and what to do next. */
  err(line: string): void;
  /** Text for stdout as is, no line break added: a streamed output as it arrives. Default: out. */
  write?(text: string): void;
  env: Record<string, string | undefined>;
  /** `--json` was given: results (and errors) as one JSON document on stdout. */
  json?: boolean;
}

/** Prints `value` as JSON with --json, else the lines `text` gives. */
export function output(io: Io, value: unknown, text: () => string[]): void {
  if (io.json) io.out(JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2));
  else for (const line of text()) io.out(line);
}

/** Wrong or missing arguments: exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/** A failure with the step that should come next: exit code 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly next?: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Resolves with the exit code (0 unless given); throws UsageError or CliError. */
  run(args: string[], io: Io): Promise<number | void>;
}
