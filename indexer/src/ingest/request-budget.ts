// The pace of the indexer's calls to its RPC node. A provider's plan allows so many calls a
// second (each call of a JSON-RPC batch counts) and answers 429 past it: the backfill of a long
// history would hit that at once, and every 429 is a request wasted. Calls are spaced evenly at
// the configured rate, with no burst, so that no second ever carries more than the budget.

export class RequestBudget {
  /** When the next call may start, in performance.now() milliseconds. */
  private next_ms = 0;

  /** `calls_per_second`: 0 for no budget (localnet, or a node of one's own). */
  constructor(private readonly calls_per_second: number) {}

  /** Waits until `calls` more calls fit the budget, and books them. */
  async take(calls: number): Promise<void> {
    if (this.calls_per_second <= 0) return;
    const now_ms = performance.now();
    const start_ms = Math.max(now_ms, this.next_ms);
    this.next_ms = start_ms + (calls * 1000) / this.calls_per_second;
    if (start_ms > now_ms) await new Promise((resolve) => setTimeout(resolve, start_ms - now_ms));
  }
}
