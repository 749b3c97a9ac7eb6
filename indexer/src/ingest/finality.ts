// Finality: confirmed events at or below the chain's finalized slot are checked against it.
// A transaction the chain still has is promoted; one it no longer knows was on a dropped fork:
// its events are removed and every view corrected. The watermark then moves to the highest slot
// at and below which every stored event is finalized.
import type { SolanaRpc } from "./rpc.js";
import type { EventStore } from "./store.js";

export interface FinalityResult {
  promoted: number;
  dropped: number;
  finalizedSlot: number;
}

export async function settleFinality(rpc: SolanaRpc, store: EventStore, limit = 2000): Promise<FinalityResult> {
  const finalizedSlot = await rpc.getSlot("finalized");
  const rows = await store.pool.query<{ signature: string; slot: string }>(
    `SELECT signature, slot FROM ${store.schema}.transactions WHERE commitment = 'confirmed' AND slot <= $1 ORDER BY slot LIMIT $2`,
    [finalizedSlot, limit],
  );
  const signatures = rows.rows.map((row) => row.signature);
  const statuses = await rpc.getSignatureStatuses(signatures);
  const promoted: string[] = [];
  const dropped: string[] = [];
  statuses.forEach((status, i) => {
    if (status === null) dropped.push(signatures[i]!);
    else if (status.confirmationStatus === "finalized") promoted.push(signatures[i]!);
  });
  await store.drop(dropped);
  await store.promote(promoted);
  const lowest = await store.pool.query<{ slot: string | null }>(`SELECT min(slot) AS slot FROM ${store.schema}.transactions WHERE commitment = 'confirmed'`);
  const pendingSlot = lowest.rows[0]?.slot === null || lowest.rows[0]?.slot === undefined ? null : Number(lowest.rows[0].slot);
  const watermark = pendingSlot === null ? finalizedSlot : Math.min(finalizedSlot, pendingSlot - 1);
  await store.setFinalizedSlot(watermark);
  return { promoted: promoted.length, dropped: dropped.length, finalizedSlot: watermark };
}
