// What one MCP session may still spend. A call reserves its price before it is sent, so calls
// running at the same time cannot together pass the limit; once answered, the reservation is
// replaced by what the call was charged (nothing for a refunded one).
export class SessionBudget {
  private spent_usdc = 0n;
  private reserved_usdc = 0n;

  constructor(readonly limit_usdc: bigint) {}

  remaining_usdc(): bigint {
    return this.limit_usdc - this.spent_usdc - this.reserved_usdc;
  }

  /** False, reserving nothing, when `price_usdc` is more than what is left. */
  reserve(price_usdc: bigint): boolean {
    if (price_usdc > this.remaining_usdc()) return false;
    this.reserved_usdc += price_usdc;
    return true;
  }

  /** Ends a reservation of `reserved_usdc` with the call charged `charged_usdc`. */
  settle(reserved_usdc: bigint, charged_usdc: bigint): void {
    this.reserved_usdc -= reserved_usdc;
    this.spent_usdc += charged_usdc;
  }
}
