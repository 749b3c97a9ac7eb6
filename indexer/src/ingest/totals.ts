// Sums over the events that are not part of an execution: subscriptions and fee sweeps. Each
// event adds its sign × its amounts, so storing then dropping an event leaves the sums as before.
import { feeShardPda, FEE_SHARD_COUNT } from "@agent-market/program";
import type { PublicKey } from "@solana/web3.js";
import type { Queryable } from "@agent-market/service";

import type { StoredEvent } from "./event-row.js";

/** Each fee shard's index by its address, under the program at `programId`. */
export function feeShardIndexes(programId: PublicKey): ReadonlyMap<string, number> {
  return new Map(Array.from({ length: FEE_SHARD_COUNT }, (_, index) => [feeShardPda(index, programId).toBase58(), index]));
}

export interface TotalDelta {
  amount: bigint;
  count: number;
  maxSlot: number;
}

export type EventLike = Pick<StoredEvent, "name" | "data" | "agent" | "feeShard" | "slot">;

export class TotalDeltas {
  private readonly deltas = new Map<string, TotalDelta>();

  constructor(private readonly shardIndexes: ReadonlyMap<string, number>) {}

  private bump(key: string, amount: bigint, count: number, slot: number): void {
    const delta = this.deltas.get(key) ?? { amount: 0n, count: 0, maxSlot: 0 };
    delta.amount += amount;
    delta.count += count;
    delta.maxSlot = Math.max(delta.maxSlot, slot);
    this.deltas.set(key, delta);
  }

  add(event: EventLike, sign: 1 | -1): void {
    const s = BigInt(sign);
    const data = event.data;
    if (event.name === "Subscribed") {
      const amount = BigInt(String(data.amountUsdc));
      const creatorShare = BigInt(String(data.creatorShareUsdc));
      const fee = BigInt(String(data.feeUsdc));
      this.bump(`agent:${event.agent}:subscriptions`, s * amount, sign, event.slot);
      this.bump(`agent:${event.agent}:subscription_earned`, s * creatorShare, sign, event.slot);
      this.bump(`market:subscriptions`, s * amount, sign, event.slot);
      this.bump(`market:subscription_fees`, s * fee, sign, event.slot);
      if (event.feeShard !== null) this.bump(`shard:${event.feeShard}:subscription_fees`, s * fee, sign, event.slot);
    } else if (event.name === "FeesSwept") {
      const amount = BigInt(String(data.amountUsdc));
      const index = this.shardIndexes.get(String(data.feeShard));
      if (index !== undefined) this.bump(`shard:${index}:swept`, s * amount, sign, event.slot);
      this.bump(`market:swept`, s * amount, sign, event.slot);
    }
  }

  async write(db: Queryable, schema: string): Promise<void> {
    if (this.deltas.size === 0) return;
    const rows = [...this.deltas].map(([key, delta]) => ({ key, amount_usdc: delta.amount.toString(), count: delta.count, max_slot: delta.maxSlot }));
    await db.query(
      `INSERT INTO ${schema}.totals AS t (key, amount_usdc, count, max_slot)
       SELECT key, amount_usdc, count, max_slot FROM jsonb_to_recordset($1::jsonb) AS r(key text, amount_usdc numeric, count bigint, max_slot bigint)
       ORDER BY key
       ON CONFLICT (key) DO UPDATE SET amount_usdc = t.amount_usdc + EXCLUDED.amount_usdc, count = t.count + EXCLUDED.count,
         max_slot = greatest(t.max_slot, EXCLUDED.max_slot)`,
      [JSON.stringify(rows)],
    );
  }
}
