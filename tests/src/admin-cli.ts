// Running the built `agent-market admin` against localnet in tests: the command as a process,
// keypair files, the market's fields as the actions change them, and a stand-in for a mainnet RPC.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { fetchMarket, IDL, type Market } from "@agent-market/program";
import type { Keypair } from "@solana/web3.js";

import { TestMarket } from "./fixtures.js";
import { REPO_ROOT } from "./localnet.js";
import { run, type Run } from "./run.js";

export type { Run };

export const CLI = join(REPO_ROOT, "sdk", "cli", "dist", "main.js");
const MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";
/** A transaction signature in base58. */
export const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

/** `agent-market ...args`, run to its end. */
export function agentMarket(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
}

export function keypairFile(dir: string, name: string, keypair: Keypair): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(Array.from(keypair.secretKey)));
  return path;
}

/** A localnet with its development market, the authority's keypair in a file, and the admin command bound to both. */
export interface AdminMarket {
  market: TestMarket;
  /** A temporary folder for keypair files. */
  dir: string;
  /** The market authority's keypair file. */
  authority: string;
  /** `agent-market admin <action> --keypair <authority> --rpc <localnet> ...args`. */
  admin(action: string, ...args: string[]): Promise<Run>;
  /** The market account as it stands. */
  read(): Promise<Market>;
}

export async function startAdminMarket(): Promise<AdminMarket> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build --workspaces first`);
  const market = await TestMarket.start();
  const dir = mkdtempSync(join(tmpdir(), "admin-"));
  const authority = keypairFile(dir, "authority.json", market.keys.authority);
  return {
    market,
    dir,
    authority,
    admin: (action, ...args) => agentMarket(["admin", action, "--keypair", authority, "--rpc", market.localnet.rpcUrl, ...args]),
    read: async () => (await fetchMarket(market.connection, undefined, { programId: market.programId }))!,
  };
}

/** The market as the admin actions see it: every field but the bumps. */
export function marketFields(market: Market) {
  const { bump: _bump, delegateBump: _delegate, ...rest } = market;
  return { ...rest, feeShardBumps: Array.from(rest.feeShardBumps) };
}

/** "Name: message" of one of the program's errors, as the CLI reports it. */
export function programError(name: string): string {
  const found = IDL.errors.find((e) => e.name === name)!;
  return `${found.name}: ${found.msg}`;
}

/** A JSON-RPC front for localnet that says it is mainnet (its genesis hash), forwarding the rest. */
export async function mainnetLookalike(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const body = Buffer.concat(chunks);
      const call = JSON.parse(body.toString()) as { id: number; method: string };
      response.writeHead(200, { "content-type": "application/json" });
      if (call.method === "getGenesisHash") {
        response.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: MAINNET_GENESIS }));
        return;
      }
      const forwarded = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
      response.end(Buffer.from(await forwarded.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
