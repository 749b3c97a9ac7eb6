// The CLI's state between runs: the API and RPC it talks to, the wallet keypair file and the
// session token of `login`. A bearer credential lives here, so the directory is 0700 and the
// file 0600, rewritten whole each time.
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

import { CliError, type Io } from "./io.js";

export interface CliConfig {
  api?: string;
  rpc?: string;
  /** Absolute path of the wallet's keypair file given to `login`. */
  keypair?: string;
  session?: { token: string; wallet: string; expires_at: string };
}

/** $AGENT_MARKET_HOME, else ~/.agent-market. */
export function homeDir(io: Io): string {
  return io.env.AGENT_MARKET_HOME || join(homedir(), ".agent-market");
}

export function configPath(io: Io): string {
  return join(homeDir(io), "config.json");
}

export async function readConfig(io: Io): Promise<CliConfig> {
  let text: string;
  try {
    text = await readFile(configPath(io), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  try {
    return JSON.parse(text) as CliConfig;
  } catch {
    throw new CliError(`${configPath(io)} is not JSON`, `delete it and run agent-market login again`);
  }
}

export async function writeConfig(io: Io, config: CliConfig): Promise<void> {
  const dir = homeDir(io);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = configPath(io);
  // Written aside and renamed, so a crash never leaves half a file, and created 0600 so the
  // token is never readable by others, even for a moment.
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/**
 * The API's URL: --api, else $AGENT_MARKET_API_URL, else the one `login` used. Its origin, as the
 * client wants it: given as `npm start` prints it (ending in /v1), the /v1 is dropped, since the
 * client's paths start with it.
 */
export function apiUrl(io: Io, option: string | undefined, config: CliConfig): string {
  const url = option ?? io.env.AGENT_MARKET_API_URL ?? config.api;
  if (!url) throw new CliError("no API URL", "pass --api <url> (or set AGENT_MARKET_API_URL, or run agent-market login --api <url>)");
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** The Solana RPC's URL: --rpc, else $AGENT_MARKET_RPC_URL, else the one `login` remembered. */
export function rpcUrl(io: Io, option: string | undefined, config: CliConfig): string {
  const url = optionalRpcUrl(io, option, config);
  if (!url) throw new CliError("no RPC URL", "pass --rpc <url> (or set AGENT_MARKET_RPC_URL, or run agent-market login --rpc <url>)");
  return url;
}

/** As rpcUrl, for commands that can do without the chain. */
export function optionalRpcUrl(io: Io, option: string | undefined, config: CliConfig): string | undefined {
  return option ?? io.env.AGENT_MARKET_RPC_URL ?? config.rpc;
}
