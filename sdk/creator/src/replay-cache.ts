/**
 * Keys seen recently, each until its own expiry, at most `capacity` of them: the memory a creator
 * needs to refuse a request the marketplace signed once from being run twice.
 */
export class ReplayCache {
  // Map iterates in insertion order, oldest first.
  readonly #expiries_secs = new Map<string, number>();

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`a replay cache holds at least one entry, got ${capacity}`);
    }
  }

  get size(): number {
    return this.#expiries_secs.size;
  }

  /**
   * Remembers `key` until `expires_at_secs` and answers true, or answers false if it is already
   * remembered and not yet expired at `now_secs`.
   */
  remember(key: string, expires_at_secs: number, now_secs: number): boolean {
    const seen = this.#expiries_secs.get(key);
    if (seen !== undefined && seen >= now_secs) return false;
    this.#expiries_secs.delete(key);
    // Entries arrive roughly in expiry order, so expired ones gather at the front; when full, the
    // oldest goes even if unexpired, which bounds memory at the price of forgetting it early.
    for (const [oldest, expiry_secs] of this.#expiries_secs) {
      if (expiry_secs >= now_secs && this.#expiries_secs.size < this.capacity) break;
      this.#expiries_secs.delete(oldest);
    }
    this.#expiries_secs.set(key, expires_at_secs);
    return true;
  }
}
