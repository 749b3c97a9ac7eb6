import { formatUsdc } from "@agent-market/client";
import { useState } from "react";

import { useApp } from "../app-context.js";
import { openChain } from "../data/chain.js";
import { topUpCollateral } from "../data/my-agents.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { usdcText } from "./money.js";

/**
 * An agent whose collateral is below the market's minimum (an upheld dispute's slash took some):
 * the marketplace will not list or resume it until it holds the minimum again. Says how much is
 * missing and tops exactly that up with one signature; then `after` (a resume, say) runs.
 * Nothing shows while the collateral reaches the minimum.
 */
export function TopUpToMinimum({
  address,
  name,
  collateralUsdc,
  minimumUsdc,
  label = (short) => `Sign and top up ${short}`,
  words,
  after,
}: {
  address: string;
  name: string;
  collateralUsdc: bigint;
  minimumUsdc: bigint;
  /** The button's words, given the amount missing ("Sign and top up 0.50 USDC"). */
  label?: (short: string) => string;
  /** What is said before the button, in place of why the minimum matters. */
  words?: string;
  after(): Promise<void> | void;
}) {
  const { wallet, config, network } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const shortUsdc = minimumUsdc - collateralUsdc;
  if (shortUsdc <= 0n) return null;
  const short = usdcText(formatUsdc(shortUsdc));

  async function topUp() {
    setBusy(true);
    setError(null);
    try {
      await topUpCollateral(await openChain(config, network), wallet, address, shortUsdc);
      await after();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="notice notice-warn" role="status" data-testid="collateral-short">
      <p>
        {words ??
          `${name} locks ${usdcText(formatUsdc(collateralUsdc))}, ${short} less than the market's minimum of ${usdcText(formatUsdc(minimumUsdc))} (an upheld dispute pays the payer from the collateral). The marketplace will not resume or list it until it locks the minimum again.`}
      </p>
      <div className="row">
        <button type="button" className="primary" disabled={busy} onClick={() => void topUp()}>
          {label(short)}
        </button>
        {busy && <span className="muted small">Waiting for the wallet…</span>}
      </div>
      {error !== null && <ErrorNotice error={error} />}
    </div>
  );
}
