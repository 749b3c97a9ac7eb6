// After a reload or in a new tab: the wallet a stored session was opened with, connected again
// without asking (a Wallet Standard wallet that already trusts this site connects silently).
import { getWallets } from "@wallet-standard/app";
import type { Wallet } from "@wallet-standard/base";

import { connectDevelopmentArbiter, connectLocalWallet, DEV_ARBITER_WALLET } from "./local-wallet.js";
import { connectStandardWallet, usable } from "./standard-wallets.js";
import type { ConnectedWallet } from "./wallet.js";

/** Extensions register a moment after the page loads. */
const REGISTER_WAIT_MS = 3_000;

function registered(name: string): Promise<Wallet | null> {
  const registry = getWallets();
  const find = () => registry.get().find((w) => w.name === name && usable(w)) ?? null;
  const now = find();
  if (now !== null) return Promise.resolve(now);
  return new Promise((resolve) => {
    const timer = setTimeout(() => (off(), resolve(null)), REGISTER_WAIT_MS);
    const off = registry.on("register", () => {
      const found = find();
      if (found !== null) {
        clearTimeout(timer);
        off();
        resolve(found);
      }
    });
  });
}

export async function reconnect(
  stored: { walletName: string; local: boolean },
  config: { localnet: boolean; dev_arbiter_secret_key: number[] | null },
): Promise<ConnectedWallet | null> {
  if (stored.local && stored.walletName === DEV_ARBITER_WALLET) {
    return config.dev_arbiter_secret_key === null ? null : connectDevelopmentArbiter(config.dev_arbiter_secret_key);
  }
  if (stored.local) return config.localnet ? connectLocalWallet() : null;
  const wallet = await registered(stored.walletName);
  return wallet === null ? null : connectStandardWallet(wallet, { silent: true });
}
