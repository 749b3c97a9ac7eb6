// On localnet only: the development arbiter's committed keypair (localnet/dev-config.json), so
// that the dashboard can offer to sign in as the market's arbiter and the arbiter's screens can be
// tried. Its secret half is public already; it is given out only when the market's arbiter is that
// very key, which is never so on mainnet (config refuses DASHBOARD_LOCALNET there). The relayer
// may run without the repository: then there is none to offer.
import { readFile } from "node:fs/promises";

import { Keypair } from "@solana/web3.js";

const DEV_CONFIG = new URL("../../localnet/dev-config.json", import.meta.url);

let loaded: Promise<Keypair | null> | undefined;

function committedArbiter(): Promise<Keypair | null> {
  loaded ??= readFile(DEV_CONFIG, "utf8").then(
    (text) => {
      const secret = (JSON.parse(text) as { keypairs?: { arbiter?: number[] } }).keypairs?.arbiter;
      return Array.isArray(secret) && secret.length === 64 ? Keypair.fromSecretKey(Uint8Array.from(secret)) : null;
    },
    () => null,
  );
  return loaded;
}

/** The committed arbiter's 64-byte secret key when `arbiter` (the market's) is that key. */
export async function developmentArbiterKey(arbiter: string | null): Promise<number[] | null> {
  if (arbiter === null) return null;
  const keypair = await committedArbiter();
  return keypair !== null && keypair.publicKey.toBase58() === arbiter ? Array.from(keypair.secretKey) : null;
}
