// What settling an escrow charges and returns, by the program's rule (Escrow::charge): a
// fixed-price escrow (no price per unit) is charged its whole amount whatever units its creator
// reports; a metered one `units × price_per_unit_usdc`, the rest going back to its payer in the
// same instruction, and units above its maximum are refused (UnitsAboveMaximum).

/** The escrow fields a charge depends on: those of the Escrow account. */
export interface ChargedEscrow {
  /** What the escrow holds. */
  amountUsdc: bigint;
  /** 0 for a fixed-price call. */
  pricePerUnitUsdc: bigint;
  /** The most units a metered call may be charged for. */
  maxUnits: bigint;
}

export interface Charge {
  chargedUsdc: bigint;
  returnedUsdc: bigint;
}

/** Thrown for units the program would refuse with UnitsAboveMaximum. */
export class UnitsAboveMaximumError extends RangeError {
  constructor(
    readonly units: bigint,
    readonly maxUnits: bigint,
  ) {
    super(`${units} units are above the call's maximum of ${maxUnits}`);
    this.name = "UnitsAboveMaximumError";
  }
}

export function chargeOf(escrow: ChargedEscrow, units: bigint): Charge {
  if (escrow.pricePerUnitUsdc === 0n) return { chargedUsdc: escrow.amountUsdc, returnedUsdc: 0n };
  if (units > escrow.maxUnits) throw new UnitsAboveMaximumError(units, escrow.maxUnits);
  const chargedUsdc = units * escrow.pricePerUnitUsdc;
  return { chargedUsdc, returnedUsdc: escrow.amountUsdc - chargedUsdc };
}

/**
 * What a metered call holds: the whole units the smaller of the agent's `maxUnitsPerCall` and the
 * caller's `maxAmountUsdc` buy, at their price (open_escrow's `CallPrice::metered`); null when the
 * caller's maximum buys no unit, which the program refuses with PriceAboveMaximum.
 */
export function meteredHold(
  pricePerUnitUsdc: bigint,
  maxUnitsPerCall: bigint,
  maxAmountUsdc: bigint | undefined,
): { amountUsdc: bigint; maxUnits: bigint } | null {
  const byCaller = maxAmountUsdc === undefined ? maxUnitsPerCall : maxAmountUsdc / pricePerUnitUsdc;
  const maxUnits = byCaller < maxUnitsPerCall ? byCaller : maxUnitsPerCall;
  if (maxUnits < 1n) return null;
  return { amountUsdc: maxUnits * pricePerUnitUsdc, maxUnits };
}
