// The wallet session (Sign-In With Solana against the relayer) and everything it reaches:
// keys, funding, allowance transactions. The token is kept in this browser's localStorage until
// it expires, so a reload or a new tab stays signed in (as a payments dashboard does); signing in
// or out reaches every open tab. It is a session of this origin only: it cannot sign or move funds.
import { WalletSession } from "@agent-market/client";

import type { ConnectedWallet } from "../wallet/wallet.js";

const TOKEN_KEY = "agent-market.session";

export interface StoredSession {
  token: string;
  wallet: string;
  /** The wallet's name as the sign-in screen listed it, to connect it again on reload. */
  walletName: string;
  local: boolean;
  expires_at: string;
}

function store(session: WalletSession, wallet: ConnectedWallet): void {
  const stored: StoredSession = { token: session.token, wallet: wallet.address, walletName: wallet.name, local: wallet.local, expires_at: session.session.expires_at };
  localStorage.setItem(TOKEN_KEY, JSON.stringify(stored));
}

export async function signIn(wallet: ConnectedWallet): Promise<WalletSession> {
  const session = await WalletSession.signIn(location.origin, { publicKey: wallet.address, signMessage: (m) => wallet.signMessage(m) });
  store(session, wallet);
  return session;
}

/** The session this browser keeps, while it has not expired. */
export function storedSession(): StoredSession | null {
  const saved = localStorage.getItem(TOKEN_KEY);
  if (saved === null) return null;
  try {
    const stored = JSON.parse(saved) as StoredSession;
    if (typeof stored.token !== "string" || !(Date.parse(stored.expires_at) > Date.now())) throw new Error("expired");
    return stored;
  } catch {
    localStorage.removeItem(TOKEN_KEY);
    return null;
  }
}

/** The session stored for this wallet, if the relayer still honours it. */
export async function resumeSession(wallet: string): Promise<WalletSession | null> {
  const stored = storedSession();
  if (stored === null || stored.wallet !== wallet) return null;
  try {
    return await WalletSession.resume(location.origin, stored.token);
  } catch {
    localStorage.removeItem(TOKEN_KEY);
    return null;
  }
}

export async function signOut(session: WalletSession): Promise<void> {
  localStorage.removeItem(TOKEN_KEY);
  await session.signOut().catch(() => undefined);
}

/**
 * Follows the session other tabs of this browser keep (a tab's own writes fire no storage event):
 * `onSignedOut` when one signs out or the session is cleared there, `onSignedIn` when one signs
 * in, so every open tab holds the session the last sign-in stored.
 */
export function watchSession(handlers: { onSignedIn: () => void; onSignedOut: () => void }): () => void {
  const listener = (event: StorageEvent) => {
    if (event.key !== TOKEN_KEY && event.key !== null) return;
    if (localStorage.getItem(TOKEN_KEY) === null) handlers.onSignedOut();
    else if (event.newValue !== event.oldValue) handlers.onSignedIn();
  };
  window.addEventListener("storage", listener);
  return () => window.removeEventListener("storage", listener);
}
