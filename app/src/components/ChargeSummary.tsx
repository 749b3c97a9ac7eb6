import type { Charge } from "@agent-market/client";

import { unitsText } from "./units.js";
import { Usdc } from "./Usdc.js";

/**
 * What an execution cost: the charge and its split and, for a metered call, the units it was
 * charged for, what its escrow held and what went back to the payer (a metered escrow holds the
 * most the call may cost; the settlement returns the rest).
 */
export function ChargeSummary({ charge, unit }: { charge: Charge; unit: string | null }) {
  const metered = charge.price_per_unit_usdc !== null;
  return (
    <span data-testid="charge-summary">
      Charged{" "}
      <strong>
        <Usdc amount={charge.charged_usdc} testId="charged" />
      </strong>
      {metered && charge.units !== null && <span data-testid="charge-units"> for {unitsText(charge.units, unit)}</span>} (
      <Usdc amount={charge.creator_share_usdc} /> to the creator, <Usdc amount={charge.fee_usdc} /> fee)
      {metered && charge.held_usdc !== null && (
        <>
          {" "}
          · <Usdc amount={charge.held_usdc} testId="charge-held" /> held · <Usdc amount={charge.returned_usdc} testId="charge-returned" /> returned
        </>
      )}
    </span>
  );
}
