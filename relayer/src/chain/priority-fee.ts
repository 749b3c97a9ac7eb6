// The unit price the relayer offers for its transactions' compute. A cluster reports, per recent
// slot, the lowest price that landed a transaction in it; the relayer pays a percentile of those,
// never more than a cap, and asks again at most once every few seconds so that pricing costs no
// RPC call per transaction. Its transactions write no account others contend for (each agent's
// vault and log, the payers' accounts, one of eight fee shards), so the slot-wide price is the
// one to meet. localnet has no fee market and reports 0, as an idle cluster does.
import type { RpcClient } from "./rpc-client.js";

export interface PriorityFeePolicy {
  /** Which percentile of the recent slots' prices to pay, 0 to 100. */
  percentile: number;
  /** The most paid per unit, in micro-lamports; 0 pays no priority fee at all. */
  max_micro_lamports: bigint;
  /** How long a price is used before the cluster is asked again. */
  refresh_ms: number;
}

export class PriorityFees {
  private price: { micro_lamports: bigint; at_ms: number } | undefined;
  private refreshing: Promise<bigint> | undefined;

  constructor(
    private readonly rpc: RpcClient,
    private readonly policy: PriorityFeePolicy,
  ) {}

  /**
   * The price to pay now, in micro-lamports per unit. Answered from the last price while it is
   * fresh, and while a refresh runs; a failed refresh keeps the last price (0 before any).
   */
  current(): bigint {
    if (this.policy.max_micro_lamports === 0n) return 0n;
    const age_ms = this.price ? Date.now() - this.price.at_ms : Infinity;
    if (age_ms >= this.policy.refresh_ms) this.refresh().catch(() => undefined);
    return this.price?.micro_lamports ?? 0n;
  }

  /** Asks the cluster for the recent prices and keeps the percentile, capped. */
  refresh(): Promise<bigint> {
    return (this.refreshing ??= this.rpc
      .getRecentPrioritizationFees([])
      .then((slots) => {
        const micro_lamports = percentileOf(
          slots.map((slot) => BigInt(slot.prioritizationFee)),
          this.policy.percentile,
        );
        const capped = micro_lamports < this.policy.max_micro_lamports ? micro_lamports : this.policy.max_micro_lamports;
        this.price = { micro_lamports: capped, at_ms: Date.now() };
        return capped;
      })
      .finally(() => {
        this.refreshing = undefined;
      }));
  }
}

/** The `percentile`th of `values` (nearest rank); 0 for none. */
export function percentileOf(values: bigint[], percentile: number): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((percentile / 100) * sorted.length)));
  return sorted[rank - 1]!;
}
