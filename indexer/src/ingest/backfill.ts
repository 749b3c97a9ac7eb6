// Backfill and gap repair: the program's signatures newer than the checkpoint, read with
// getSignaturesForAddress (newest first, `before` paging down to `until` = the checkpoint),
// then ingested oldest first in batches. Each batch's events and the checkpoint's move to its
// newest signature commit together, so a crash at any point resumes after the last commit,
// and re-reading a batch stores nothing twice.
//
// The checkpoint only moves to a finalized signature: the next pass re-reads everything above
// it, which is the scheduled gap check that finds a delivery the live source (or Helius) missed,
// and never resumes from a signature a dropped fork could take away.
import { transactionDecoder } from "./decoder.js";
import type { DecodedTransaction } from "./event-row.js";
import type { SolanaRpc, SignatureInfo } from "./rpc.js";
import type { EventStore } from "./store.js";

export interface BackfillResult {
  signatures: number;
  fetched: number;
  events: number;
}

export interface BackfillOptions {
  /** Transactions per database transaction. */
  batchSize?: number;
  /** Signatures per getSignaturesForAddress page. */
  pageSize?: number;
}

export async function backfill(rpc: SolanaRpc, store: EventStore, options: BackfillOptions = {}): Promise<BackfillResult> {
  const batchSize = options.batchSize ?? 500;
  const pageSize = options.pageSize ?? 1000;
  const program = store.programId.toBase58();
  const decode = transactionDecoder(store.programId);
  const checkpoint = await store.checkpoint();
  const finalizedSlot = await rpc.getSlot("finalized");

  // Newest first, down to the checkpoint.
  const newestFirst: SignatureInfo[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await rpc.getSignaturesForAddress(program, { before, until: checkpoint.signature ?? undefined, limit: pageSize });
    newestFirst.push(...page);
    if (page.length < pageSize) break;
    before = page[page.length - 1]!.signature;
  }
  const oldestFirst = newestFirst.reverse();
  const result: BackfillResult = { signatures: oldestFirst.length, fetched: 0, events: 0 };
  const batches: SignatureInfo[][] = [];
  for (let from = 0; from < oldestFirst.length; from += batchSize) batches.push(oldestFirst.slice(from, from + batchSize));
  // The node answers the next batch while this one is stored: reading and storing overlap
  // instead of taking turns. Batches are still stored one at a time, in order, so the
  // checkpoint only ever moves forward over what is committed.
  const read = async (batch: SignatureInfo[]): Promise<DecodedTransaction[]> => {
    // Failed transactions have no events, and stored ones are not read again.
    const known = await store.known(batch.map((info) => info.signature));
    const wanted = batch.filter((info) => (info.err === null || info.err === undefined) && !known.has(info.signature));
    const raws = await rpc.getTransactions(wanted.map((info) => info.signature));
    return raws.flatMap((raw) => (raw ? [decode(raw)] : []));
  };
  let next = batches.length > 0 ? read(batches[0]!) : null;
  for (let i = 0; i < batches.length; i += 1) {
    const batch = batches[i]!;
    const decoded = await next!;
    next = i + 1 < batches.length ? read(batches[i + 1]!) : null;
    // A failed read of the next batch surfaces when it is awaited; keep it from being unhandled meanwhile.
    next?.catch(() => {});
    result.fetched += decoded.length;
    const finalizedInBatch = batch.filter((info) => info.slot <= finalizedSlot);
    const last = finalizedInBatch[finalizedInBatch.length - 1];
    // What the chain already finalized is stored finalized: no fork can take it away.
    const stored = await store.ingest(decoded, (tx) => (tx.slot <= finalizedSlot ? "finalized" : "confirmed"), last ? { signature: last.signature, slot: last.slot } : undefined);
    result.events += stored.events;
  }
  return result;
}
