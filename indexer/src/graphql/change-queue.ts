// The iterator a subscription reads its changes from. Changes that arrive while the subscriber is
// still sending the previous answer are merged by key (the same execution twice is sent once,
// with its latest state), so a slow subscriber holds at most one pending change per key instead
// of a queue that grows with the ingestion rate. `return` (the client went away) ends it at once,
// even while it waits.
export class ChangeQueue<T> implements AsyncIterableIterator<T> {
  private readonly pending = new Map<string, T>();
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private done = false;

  constructor(private readonly onClose: () => void) {}

  push(key: string, value: T): void {
    if (this.done) return;
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = null;
      wake({ value, done: false });
      return;
    }
    this.pending.delete(key);
    this.pending.set(key, value);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    const first = this.pending.entries().next();
    if (!first.done) {
      this.pending.delete(first.value[0]);
      return Promise.resolve({ value: first.value[1], done: false });
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.done) {
      this.done = true;
      this.pending.clear();
      this.onClose();
      this.waiting?.({ value: undefined, done: true });
      this.waiting = null;
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

/** The values of `source` that `keep` accepts, one at a time; `return` is passed through. */
export function keepOnly<T>(source: AsyncIterableIterator<T>, keep: (value: T) => Promise<boolean>): AsyncIterableIterator<T> {
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      for (;;) {
        const result = await source.next();
        if (result.done || (await keep(result.value))) return result;
      }
    },
    return: () => source.return!(),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
