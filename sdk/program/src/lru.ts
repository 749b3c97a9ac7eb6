// A Map that keeps at most `capacity` entries, dropping the least recently used one first. The
// caches of derived keys and addresses use it, and the relayer's caches: a long-running relayer
// sees an unbounded stream of agents, payers and executions, and only the recent ones are worth
// keeping.

export class LruMap<K, V> {
  // A Map iterates in insertion order, so re-inserting on every hit keeps the least recently
  // used entry first.
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Every entry, least recently used first; deleting the one visited is allowed. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries.entries();
  }

  /** The cached value of `key`, computed by `make` and cached on a miss. */
  getOrSet(key: K, make: () => V): V {
    let value = this.get(key);
    if (value === undefined) {
      value = make();
      this.set(key, value);
    }
    return value;
  }
}
