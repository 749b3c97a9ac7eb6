// What may still be spent under one limit: a session's, or the whole process's, which every
// session shares (new sessions start with fresh session limits, never with fresh money). A call
// reserves its price before it is sent, so calls running at the same time cannot together pass
// the limit; once its outcome is known, the reservation is replaced by what the call was charged
// (nothing for a refunded one).
export class SpendingLimit {
  private spent_usdc = 0n;
  private reserved_usdc = 0n;

  constructor(readonly limit_usdc: bigint) {}

  remaining_usdc(): bigint {
    return this.limit_usdc - this.spent_usdc - this.reserved_usdc;
  }

  held_usdc(): bigint {
    return this.reserved_usdc;
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
