// The live source: a `logsSubscribe` mentioning the program at `confirmed`; each signature is
// then read with getTransaction at `confirmed` and ingested. What this misses (a dropped
// socket, a restart) the gap check finds.
import { transactionDecoder, type RawTransaction } from "./decoder.js";
import { subscribeLogs } from "./logs-socket.js";
import type { SolanaRpc } from "./rpc.js";
import type { EventStore } from "./store.js";

export interface LiveSource {
  close(): Promise<void>;
}

export interface LiveOptions {
  onError(err: unknown): void;
  /** Called after each transaction is ingested, with its signature (the benchmark's probe). */
  onIngested?(signature: string): void;
}

const RETRIES = 20;
const RETRY_MS = 100;
/** Signatures read and stored together: one getTransaction batch, one database transaction. */
const MAX_BATCH = 100;

export function startLive(websocketUrl: string, rpc: SolanaRpc, store: EventStore, options: LiveOptions): LiveSource {
  const decode = transactionDecoder(store.programId);
  // Notifications queue up while a batch is being read and stored; the next batch takes them
  // all, so that under load the work per transaction shrinks instead of the queue growing. The
  // next batch is read from the node while the previous one is stored (batches are stored one
  // at a time, in order). A signature the node does not answer yet waits RETRY_MS before it is
  // asked again, without holding back the signatures notified meanwhile.
  const queue = new Map<string, { attempts: number; readyAt: number }>();
  let wake: (() => void) | null = null;
  let draining: Promise<void> | null = null;
  let storing: Promise<void> = Promise.resolve();
  let stored = true;
  let closed = false;

  /** Leaves the signature to a later batch, or after RETRIES attempts to the gap check. */
  const retry = (signature: string) => {
    const attempts = (queue.get(signature)?.attempts ?? 0) + 1;
    if (attempts >= RETRIES) queue.delete(signature);
    else queue.set(signature, { attempts, readyAt: Date.now() + RETRY_MS });
  };

  const storeBatch = async (signatures: string[], raws: (RawTransaction | null)[]): Promise<void> => {
    const found = raws.flatMap((raw) => (raw ? [raw] : []));
    try {
      if (found.length > 0) await store.ingest(found.map(decode), "confirmed");
    } catch (err) {
      signatures.forEach((signature, i) => raws[i] && retry(signature));
      throw err;
    }
    signatures.forEach((signature, i) => {
      if (!raws[i]) return;
      queue.delete(signature);
      options.onIngested?.(signature);
    });
  };

  const drainOnce = async (): Promise<void> => {
    const now = Date.now();
    const batch: string[] = [];
    let nextReadyAt = Infinity;
    for (const [signature, entry] of queue) {
      if (entry.readyAt <= now) {
        if (batch.length < MAX_BATCH) batch.push(signature);
      } else nextReadyAt = Math.min(nextReadyAt, entry.readyAt);
    }
    if (batch.length === 0) {
      // Only retries, or signatures being stored, are left: wait for the first retry to be due,
      // the batch being stored, or a new notification.
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(nextReadyAt) ? setTimeout(resolve, nextReadyAt - now) : undefined;
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (!stored) void storing.then(wake);
      });
      wake = null;
      return;
    }
    for (const signature of batch) queue.set(signature, { attempts: queue.get(signature)!.attempts, readyAt: Infinity });
    let raws: (RawTransaction | null)[];
    try {
      raws = await rpc.getTransactions(batch);
    } catch (err) {
      batch.forEach(retry);
      throw err;
    }
    // The notification can come before the node answers at `confirmed`: retry a few times.
    batch.forEach((signature, i) => raws[i] || retry(signature));
    await storing;
    stored = false;
    storing = storeBatch(batch, raws)
      .catch(options.onError)
      .finally(() => {
        stored = true;
      });
  };

  const drain = () => {
    if (draining || closed) return;
    draining = (async () => {
      while (queue.size > 0 && !closed) await drainOnce().catch(options.onError);
    })().finally(() => {
      draining = null;
    });
  };

  const logs = subscribeLogs(
    websocketUrl,
    store.programId.toBase58(),
    (notice) => {
      if (notice.err !== null || closed) return;
      if (!queue.has(notice.signature)) queue.set(notice.signature, { attempts: 0, readyAt: 0 });
      wake?.();
      drain();
    },
    options.onError,
  );

  return {
    async close() {
      closed = true;
      wake?.();
      logs.close();
      await draining;
      await storing;
    },
  };
}
