// The marketplace exactly as `npm start` runs it (startLocalMarketplace: its own PostgreSQL,
// localnet at 100 ms slots, the example agents) on free ports in a folder of its own, with what
// the tests of it read: the chain, the printed test wallet's USDC account and the echo agent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { startLocalMarketplace, type LocalMarketplace, type LocalMarketplaceOptions } from "@agent-market/local";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Connection, PublicKey } from "@solana/web3.js";

import { freePort } from "./relayer.js";

export interface LocalTestMarket {
  marketplace: LocalMarketplace;
  data_dir: string;
  connection: Connection;
  /** The program's address on the chain, as the relayer serves it. */
  programId: PublicKey;
  /** The printed test wallet's USDC account. */
  payerToken: PublicKey;
  /** The echo agent's address. */
  echo: string;
  /** Stops the marketplace and removes its folder. */
  stop(): Promise<void>;
}

export async function startLocalTestMarket(
  prefix: string,
  options: Pick<LocalMarketplaceOptions, "log" | "supervision">,
): Promise<LocalTestMarket> {
  const data_dir = mkdtempSync(join(tmpdir(), prefix));
  const marketplace = await startLocalMarketplace({
    data_dir,
    rpc_port: await freePort(),
    relayer_port: await freePort(),
    agent_port: await freePort(),
    postgres_port: await freePort(),
    slot_ms: 100,
    ...options,
  });
  const market = (await (await fetch(`${marketplace.relayer_url}/v1/marketplace`)).json()) as { networks: { program_id: string; usdc_mint: string }[] };
  return {
    marketplace,
    data_dir,
    connection: new Connection(marketplace.rpc_url, "confirmed"),
    programId: new PublicKey(market.networks[0]!.program_id),
    payerToken: getAssociatedTokenAddressSync(new PublicKey(market.networks[0]!.usdc_mint), marketplace.wallet.publicKey),
    echo: marketplace.agents.find((agent) => agent.slug === "echo")!.address,
    async stop() {
      await marketplace.stop();
      rmSync(data_dir, { recursive: true, force: true });
    },
  };
}
