// The wallet session (Sign-In With Solana against the relayer) and everything it reaches:
// keys, funding, allowance transactions. The token lives in this tab's sessionStorage only.
import { WalletSession } from "@agent-market/client";

import type { ConnectedWallet } from "../wallet/wallet.js";

const TOKEN_KEY = "agent-market.session";

export async function signIn(wallet: ConnectedWallet): Promise<WalletSession> {
  const session = await WalletSession.signIn(location.origin, { publicKey: wallet.address, signMessage: (m) => wallet.signMessage(m) });
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify({ token: session.token, wallet: wallet.address }));
  return session;
}

/** The session stored for this wallet, if the relayer still honours it. */
export async function resumeSession(wallet: string): Promise<WalletSession | null> {
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved === null) return null;
  const stored = JSON.parse(saved) as { token: string; wallet: string };
  if (stored.wallet !== wallet) return null;
  try {
    return await WalletSession.resume(location.origin, stored.token);
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);
    return null;
  }
}

export async function signOut(session: WalletSession): Promise<void> {
  sessionStorage.removeItem(TOKEN_KEY);
  await session.signOut().catch(() => undefined);
}
