// Group commit for the hot statements: one statement carries the work of every caller that
// arrived while the previous ones were running. A lone caller goes at once; under load, the
// number of statements (round trips, plans, WAL flushes) grows far slower than the load.

export interface BatcherOptions {
  /** Most items in one batch. */
  max_batch: number;
  /** Most batches running at once; callers arriving while they run wait for the next one. */
  max_in_flight: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private inFlight = 0;

  /** `run` answers a batch: one output per item, in the items' order. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {}

  /** Nothing waiting and nothing running: a batcher kept per key may be forgotten. */
  get idle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.max_in_flight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.max_batch);
      this.inFlight += 1;
      this.run(batch.map((entry) => entry.item))
        .then((outputs) => batch.forEach((entry, i) => entry.resolve(outputs[i]!)))
        .catch((error: unknown) => batch.forEach((entry) => entry.reject(error)))
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}

/**
 * One Batcher per key (an agent, say), made on first use and forgotten once idle, so that only the
 * keys with work in flight hold one.
 */
export class KeyedBatchers<I, O> {
  private readonly batchers = new Map<string, Batcher<I, O>>();

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {}

  submit(key: string, item: I): Promise<O> {
    let batcher = this.batchers.get(key);
    if (!batcher) {
      batcher = new Batcher(this.run, this.options);
      this.batchers.set(key, batcher);
    }
    const done = batcher.submit(item);
    const forget = () => {
      if (batcher.idle && this.batchers.get(key) === batcher) this.batchers.delete(key);
    };
    done.then(forget, forget);
    return done;
  }
}
