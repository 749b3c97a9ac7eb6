// What every screen reads: the deployment's configuration, the wallet and its session.
import type { WalletSession } from "@agent-market/client";
import type { NetworkName } from "@agent-market/program/network";
import { createContext, useContext } from "react";

import type { DashboardConfig } from "./data/config.js";
import type { ConnectedWallet } from "./wallet/wallet.js";

export interface AppState {
  config: DashboardConfig;
  wallet: ConnectedWallet;
  session: WalletSession;
  /** The network the dashboard works on: devnet (test keys) unless only mainnet is served. */
  network: NetworkName;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (state === null) throw new Error("useApp outside a signed-in dashboard");
  return state;
}
