// On localnet, the relayer's faucet (POST /dashboard-faucet) tops the signed-in wallet up with test
// SOL for fees and test USDC to pay agents. The page never calls the chain's faucet itself.
import type { WalletSession } from "@agent-market/client";

import { postDashboardRoute } from "./dashboard-route.js";

export interface TestFunds {
  sol_lamports: string;
  balance_usdc: string;
}

export function fundFromLocalFaucet(session: WalletSession): Promise<TestFunds> {
  return postDashboardRoute<TestFunds>(session, "/dashboard-faucet");
}
