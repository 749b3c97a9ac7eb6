// Finality: confirmed events at or below the chain's finalized slot are checked against it.
// A transaction the chain has finalized is promoted. One the chain no longer knows was on a
// dropped fork, but a single `null` status proves nothing: a lagging node, or another node
// behind a load balancer, answers null for a transaction it has not seen yet. So a transaction is
// dropped only when its blockhash has expired (it can no longer land anywhere) and a read at
// `finalized` still does not find it, both asked of the configured RPC; until then it stays, and
// is asked about again on the next pass. The watermark then moves to the highest slot at and
// below which every stored event is finalized.
import type { SolanaRpc } from "./rpc.js";
import type { EventStore } from "./store.js";

export interface FinalityResult {
  promoted: number;
  dropped: number;
  /** Missing from the status read but not provably gone yet: kept for the next pass. */
  pending: number;
  finalizedSlot: number;
}

/**
 * A blockhash is valid for 150 blocks; rows stored before the blockhash was kept are judged by
 * slot distance instead, with room for skipped slots.
 */
export const EXPIRY_SLOTS_WITHOUT_BLOCKHASH = 300;

interface Candidate {
  signature: string;
  slot: number;
  blockhash: string | null;
}

async function provablyGone(rpc: SolanaRpc, candidates: Candidate[], finalizedSlot: number): Promise<string[]> {
  const blockhashes = [...new Set(candidates.flatMap((candidate) => (candidate.blockhash === null ? [] : [candidate.blockhash])))];
  const valid = new Map((await rpc.areBlockhashesValid(blockhashes)).map((isValid, i) => [blockhashes[i]!, isValid]));
  const expired = candidates.filter((candidate) =>
    candidate.blockhash === null ? finalizedSlot - candidate.slot > EXPIRY_SLOTS_WITHOUT_BLOCKHASH : valid.get(candidate.blockhash) === false,
  );
  if (expired.length === 0) return [];
  const finalized = await rpc.getTransactions(
    expired.map((candidate) => candidate.signature),
    "finalized",
  );
  return expired.filter((_, i) => finalized[i] === null).map((candidate) => candidate.signature);
}

export async function settleFinality(rpc: SolanaRpc, store: EventStore, limit = 2000): Promise<FinalityResult> {
  const finalizedSlot = await rpc.getSlot("finalized");
  const rows = await store.pool.query<{ signature: string; slot: string; blockhash: string | null }>(
    `SELECT signature, slot, blockhash FROM ${store.schema}.transactions WHERE commitment = 'confirmed' AND slot <= $1 ORDER BY slot LIMIT $2`,
    [finalizedSlot, limit],
  );
  const signatures = rows.rows.map((row) => row.signature);
  const statuses = await rpc.getSignatureStatuses(signatures);
  const promoted: string[] = [];
  const missing: Candidate[] = [];
  statuses.forEach((status, i) => {
    const row = rows.rows[i]!;
    if (status === null) missing.push({ signature: row.signature, slot: Number(row.slot), blockhash: row.blockhash });
    else if (status.confirmationStatus === "finalized") promoted.push(row.signature);
  });
  const dropped = await provablyGone(rpc, missing, finalizedSlot);
  await store.drop(dropped);
  await store.promote(promoted);
  const lowest = await store.pool.query<{ slot: string | null }>(`SELECT min(slot) AS slot FROM ${store.schema}.transactions WHERE commitment = 'confirmed'`);
  const pendingSlot = lowest.rows[0]?.slot === null || lowest.rows[0]?.slot === undefined ? null : Number(lowest.rows[0].slot);
  const watermark = pendingSlot === null ? finalizedSlot : Math.min(finalizedSlot, pendingSlot - 1);
  await store.setFinalizedSlot(watermark);
  return { promoted: promoted.length, dropped: dropped.length, pending: missing.length - dropped.length, finalizedSlot: watermark };
}
