// A command run to its end in tests, its output collected: the CLI, the SDK's examples, npm in a
// packed install.
import { spawn } from "node:child_process";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command ...args` with exactly `env` (pass `process.env` on to keep it), its stdin closed. */
export function run(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
