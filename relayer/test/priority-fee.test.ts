// The relayer's unit price: a percentile of the cluster's recent per-slot prices, capped, asked
// again at most once a refresh period, and none at all when the cap is 0. Who calls it: every
// signing of a relayer transaction; what it costs: one getRecentPrioritizationFees a period,
// however many transactions are signed.
import { strict as assert } from "node:assert";

import { PriorityFees, percentileOf } from "../src/chain/priority-fee.js";
import type { RpcClient } from "../src/chain/rpc-client.js";

/** An RPC answering the given per-slot prices, counting the calls. */
function rpcAnswering(prices: number[]): { rpc: RpcClient; calls: () => number } {
  let calls = 0;
  const rpc = {
    getRecentPrioritizationFees: async () => {
      calls += 1;
      return prices.map((prioritizationFee, slot) => ({ slot, prioritizationFee }));
    },
  } as unknown as RpcClient;
  return { rpc, calls: () => calls };
}

describe("priority fee", () => {
  it("takes the nearest-rank percentile of the slots' prices, 0 for none", () => {
    const prices = [0n, 0n, 10n, 20n, 30n, 40n, 50n, 60n, 70n, 1_000n];
    assert.equal(percentileOf(prices, 50), 30n);
    assert.equal(percentileOf(prices, 90), 70n);
    assert.equal(percentileOf(prices, 100), 1_000n);
    assert.equal(percentileOf(prices, 0), 0n);
    assert.equal(percentileOf([], 75), 0n);
  });

  it("caps the price, and asks the cluster once per refresh period whatever the number of transactions", async () => {
    const { rpc, calls } = rpcAnswering([5, 10, 500_000, 900_000]);
    const fees = new PriorityFees(rpc, { percentile: 75, max_micro_lamports: 100_000n, refresh_ms: 60_000 });
    assert.equal(fees.current(), 0n, "nothing is known before the first answer");
    assert.equal(await fees.refresh(), 100_000n, "500,000 capped at 100,000");
    for (let i = 0; i < 1_000; i += 1) assert.equal(fees.current(), 100_000n);
    assert.equal(calls(), 1, "one RPC call for a thousand signings");
  });

  it("pays none and asks nothing when the cap is 0", async () => {
    const { rpc, calls } = rpcAnswering([1_000]);
    const fees = new PriorityFees(rpc, { percentile: 50, max_micro_lamports: 0n, refresh_ms: 0 });
    assert.equal(fees.current(), 0n);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(calls(), 0);
  });

  it("keeps the last price when the cluster does not answer", async () => {
    let failing = false;
    const rpc = {
      getRecentPrioritizationFees: async () => {
        if (failing) throw new Error("unavailable");
        return [{ slot: 1, prioritizationFee: 7 }];
      },
    } as unknown as RpcClient;
    const fees = new PriorityFees(rpc, { percentile: 50, max_micro_lamports: 1_000n, refresh_ms: 0 });
    assert.equal(await fees.refresh(), 7n);
    failing = true;
    await assert.rejects(fees.refresh());
    assert.equal(fees.current(), 7n);
  });
});
