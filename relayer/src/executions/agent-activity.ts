// How many executions of each agent this instance is running, from the open of the escrow to the
// send of the settlement or refund. The batchers ask it whether waiting for more pays: as
// PostgreSQL's commit_delay acts only with commit_siblings others active, a next batch gathers
// only when enough calls of the agent are in progress to fill it soon. A lone caller, or a few,
// never wait.
export class AgentActivity {
  private readonly running = new Map<string, number>();

  /** `network:agent`, as the batchers key their queues. */
  static key(network: string, agent: string): string {
    return `${network}:${agent}`;
  }

  enter(key: string): void {
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
  }

  leave(key: string): void {
    const left = (this.running.get(key) ?? 1) - 1;
    if (left > 0) this.running.set(key, left);
    else this.running.delete(key);
  }

  count(key: string): number {
    return this.running.get(key) ?? 0;
  }

  /** Enough of the agent's calls in progress that its next batches gather (GATHER_MIN_RUNNING). */
  busy(key: string): boolean {
    return this.count(key) >= GATHER_MIN_RUNNING;
  }
}

/**
 * In progress at once, at least, for an agent's next batch to wait and gather (BATCH_GATHER_MS):
 * as many as a settlement transaction holds, so that what the wait gathers is there to come. With
 * fewer (up to about 8 concurrent callers, measured) nothing waits.
 */
export const GATHER_MIN_RUNNING = 12;
