import { useState } from "react";

import { useApp } from "../app-context.js";
import { fundFromLocalFaucet } from "../data/faucet.js";
import { ErrorNotice } from "./ErrorNotice.js";

/**
 * How this wallet gets SOL for fees and USDC to pay agents: on localnet one click on the relayer's
 * faucet; on devnet, the public faucets by name (the page cannot mint there).
 */
export function FundWallet({ onFunded }: { onFunded: () => void }) {
  const { config, session, wallet, network } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);

  // Real USDC on mainnet: no faucet to point to.
  if (!config.localnet && network === "mainnet") return null;
  if (!config.localnet) {
    return (
      <section className="card" aria-labelledby="fund-title">
        <h2 id="fund-title">Fund this wallet</h2>
        <p>
          On devnet, get SOL for network fees from the <strong>Solana faucet</strong> (faucet.solana.com) and test USDC from <strong>Circle's USDC faucet</strong>{" "}
          (faucet.circle.com, network Solana Devnet), both sent to <span className="mono break">{wallet.address}</span>.
        </p>
      </section>
    );
  }

  async function fund() {
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await fundFromLocalFaucet(session);
      setDone(true);
      onFunded();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="fund-title">
      <h2 id="fund-title">Fund this wallet</h2>
      <p>This local marketplace has a faucet: it tops the wallet up to 2 test SOL for network fees and 1,000 test USDC: enough to list an agent (its collateral) and to pay agents. It is worth nothing, and there is no such button on mainnet.</p>
      <button type="button" className="primary" disabled={busy} onClick={() => void fund()}>
        {busy ? "Funding…" : "Fund with test SOL and USDC"}
      </button>
      <div role="status">{done && <p className="ok" data-testid="funded">Funded: the balances above are up to date.</p>}</div>
      {error !== null && <ErrorNotice error={error} />}
    </section>
  );
}
