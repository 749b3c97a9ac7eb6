import { parseUsdc } from "@agent-market/client";

import { useApp } from "../app-context.js";
import { useLoad } from "../data/use-load.js";

/**
 * The next step for a wallet that holds no USDC: a first sign-in lands on API keys, where keys,
 * runs and the allowance are all useless until the wallet is funded. Says nothing while the
 * balance loads or fails (the Wallet screen reports that), nor once there is USDC.
 */
export function FundFirst() {
  const { session, network, config } = useApp();
  const [funding] = useLoad(() => session.wallet.funding(network), [session, network]);
  if (funding.state !== "ready" || parseUsdc(funding.value.balance_usdc) > 0n) return null;
  return (
    <div className="notice notice-warn" role="status" data-testid="fund-first">
      <strong>Next step: fund your wallet.</strong> It holds no USDC yet, so every run and API call would be refused. {config.localnet ? "On this local marketplace one click gives it test SOL and USDC; then" : "Add USDC, then"} set the allowance the
      marketplace may draw on. <a href="#/wallet">Fund it on the Wallet screen</a>
    </div>
  );
}
