import type { WalletSession } from "@agent-market/client";
import type { Wallet } from "@wallet-standard/base";
import { useEffect, useState } from "react";

import { ErrorNotice } from "../components/ErrorNotice.js";
import type { DashboardConfig } from "../data/config.js";
import { resumeSession, signIn } from "../data/session.js";
import { connectDevelopmentArbiter, connectLocalWallet } from "../wallet/local-wallet.js";
import { connectStandardWallet, watchWallets } from "../wallet/standard-wallets.js";
import type { ConnectedWallet } from "../wallet/wallet.js";

export function SignInScreen({ config, onSignedIn }: { config: DashboardConfig; onSignedIn: (wallet: ConnectedWallet, session: WalletSession) => void }) {
  const [wallets, setWallets] = useState<Wallet[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => watchWallets(setWallets), []);

  async function use(name: string, connect: () => Promise<ConnectedWallet>) {
    setBusy(name);
    setError(null);
    try {
      const wallet = await connect();
      const session = (await resumeSession(wallet.address)) ?? (await signIn(wallet));
      onSignedIn(wallet, session);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  }

  return (
    <main className="signin" id="main">
      <h1>Agent Market</h1>
      <p>Sign in with your Solana wallet to manage API keys, follow your usage and run agents. Signing in signs a message: it moves no funds.</p>
      <section aria-labelledby="wallets-title" className="card">
        <h2 id="wallets-title">Choose a wallet</h2>
        {wallets.length === 0 && <p className="muted">No wallet extension found. Install Phantom, Solflare or Backpack, then reload this page.</p>}
        <ul className="plain wallet-list">
          {wallets.map((w) => (
            <li key={w.name}>
              <button type="button" className="wallet-button" disabled={busy !== null} onClick={() => void use(w.name, () => connectStandardWallet(w))}>
                <img src={w.icon} alt="" width={24} height={24} /> {busy === w.name ? `Waiting for ${w.name}…` : w.name}
              </button>
            </li>
          ))}
        </ul>
        {config.localnet && (
          <div className="local-wallet">
            <p>
              <strong>Localnet only:</strong> a test wallet whose key is kept in this browser. Never use it for real funds; it is not offered on mainnet.
            </p>
            <button type="button" disabled={busy !== null} onClick={() => void use("local", connectLocalWallet)}>
              {busy === "local" ? "Signing in…" : "Use the local test wallet"}
            </button>
            {config.dev_arbiter_secret_key !== null && (
              <>
                <p>To try the arbiter's screens, sign in as this local market's development arbiter, whose key is committed with localnet.</p>
                <button type="button" disabled={busy !== null} onClick={() => void use("arbiter", () => connectDevelopmentArbiter(config.dev_arbiter_secret_key!))}>
                  {busy === "arbiter" ? "Signing in…" : "Sign in as the development arbiter"}
                </button>
              </>
            )}
          </div>
        )}
      </section>
      {error !== null && <ErrorNotice error={error} />}
    </main>
  );
}
