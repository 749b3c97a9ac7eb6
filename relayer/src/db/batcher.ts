// Group commit for the hot statements: one statement carries the work of every caller that
// arrived while the previous ones were running. A lone caller goes at once; under load, the
// number of statements (round trips, plans, WAL flushes) grows far slower than the load.

export interface BatcherOptions {
  /** Most items in one batch. */
  max_batch: number;
  /** Most batches running at once; callers arriving while they run wait for the next one. */
  max_in_flight: number;
  /**
   * After a batch of several items (callers arriving together: load), the next batch waits until
   * this long after that one started, gathering what arrives meanwhile (or until it is full). A
   * batch of one is followed at once, so a lone caller never waits. 0: never wait.
   */
  gather_ms?: number;
  /** Whether gathering pays now (callers enough to come); always, when not given. */
  gather_if?: () => boolean;
}

interface Waiting<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private inFlight = 0;
  private lastSize = 0;
  private lastStart_ms = 0;
  private gathering: NodeJS.Timeout | undefined;

  /** `run` answers a batch: one output per item, in the items' order. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {}

  /** Something waiting or running. */
  get busy(): boolean {
    return this.inFlight > 0 || this.waiting.length > 0;
  }

  /** Not busy, and nothing for a next batch to wait for: a batcher kept per key may be forgotten. */
  get idle(): boolean {
    return !this.busy && this.gatherLeft_ms() === 0;
  }

  /** How long the next batch should still wait, gathering (see `gather_ms`). */
  gatherLeft_ms(): number {
    const gather_ms = this.options.gather_ms ?? 0;
    if (gather_ms === 0 || this.lastSize < 2 || this.options.gather_if?.() === false) return 0;
    return Math.max(0, this.lastStart_ms + gather_ms - Date.now());
  }

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.max_in_flight && this.waiting.length > 0) {
      const wait_ms = this.waiting.length < this.options.max_batch ? this.gatherLeft_ms() : 0;
      if (wait_ms > 0) {
        this.gathering ??= setTimeout(() => {
          this.gathering = undefined;
          this.pump();
        }, wait_ms);
        return;
      }
      const batch = this.waiting.splice(0, this.options.max_batch);
      this.lastSize = batch.length;
      this.lastStart_ms = Date.now();
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

/** A Batcher's options, the gathering condition asked per key. */
export interface KeyedBatcherOptions extends Omit<BatcherOptions, "gather_if"> {
  gather_if?: (key: string) => boolean;
}

/**
 * One Batcher per key (an agent, say), made on first use and forgotten once idle, so that only the
 * keys with work in flight (or a next batch still gathering) hold one.
 */
export class KeyedBatchers<I, O> {
  private readonly batchers = new Map<string, Batcher<I, O>>();
  /** Batchers kept only while a next batch would gather, with their forgetting scheduled. */
  private readonly lingering = new WeakSet<Batcher<I, O>>();

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: KeyedBatcherOptions,
  ) {}

  submit(key: string, item: I): Promise<O> {
    let batcher = this.batchers.get(key);
    if (!batcher) {
      const { gather_if, ...options } = this.options;
      batcher = new Batcher(this.run, gather_if ? { ...options, gather_if: () => gather_if(key) } : options);
      this.batchers.set(key, batcher);
    }
    const done = batcher.submit(item);
    const forget = (): void => {
      if (this.batchers.get(key) !== batcher || batcher.busy) return;
      if (batcher.idle) {
        this.batchers.delete(key);
      } else if (!this.lingering.has(batcher)) {
        // Kept while its next batch would still gather; forgotten after, if nothing came meanwhile.
        this.lingering.add(batcher);
        setTimeout(() => {
          this.lingering.delete(batcher);
          forget();
        }, batcher.gatherLeft_ms()).unref();
      }
    };
    done.then(forget, forget);
    return done;
  }
}
