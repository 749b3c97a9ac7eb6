// The relayer as an operator runs it: `node relayer/dist/main.js` as a process of its own, which a
// test can kill, and the reconciliation command.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";

import { REPO_ROOT, sleep } from "./localnet.js";

/** The reconciliation command, as an operator runs it, with the relayer's environment. */
export function reconcileCommand(env: Record<string, string>) {
  return spawnSync(process.execPath, [join(REPO_ROOT, "relayer", "dist", "reconcile-main.js")], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
}

/** `node relayer/dist/main.js` with `env`, resolved once it answers HTTP. */
export async function spawnRelayer(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(REPO_ROOT, "relayer", "dist", "main.js")], {
    env: { ...process.env, ...env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the relayer exited: ${stderr}`);
    try {
      const response = await fetch(`http://127.0.0.1:${env.RELAYER_PORT}/v1/openapi.json`);
      if (response.ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the relayer did not start: ${stderr}`);
    await sleep(100);
  }
}
