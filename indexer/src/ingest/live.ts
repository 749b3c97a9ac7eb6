// The live source: a `logsSubscribe` mentioning the program at `confirmed`; each signature is
// then read with getTransaction at `confirmed` and ingested. What this misses (a dropped
// socket, a restart) the gap check finds.
import { Connection, PublicKey } from "@solana/web3.js";

import { decodeTransaction, PROGRAM_ADDRESS } from "./decoder.js";
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

export function startLive(rpcUrl: string, websocketUrl: string, rpc: SolanaRpc, store: EventStore, options: LiveOptions): LiveSource {
  const connection = new Connection(rpcUrl, { commitment: "confirmed", wsEndpoint: websocketUrl });
  // Notifications queue up while a batch is being read and stored; the next batch takes them
  // all, so that under load the work per transaction shrinks instead of the queue growing.
  const queue = new Map<string, number>(); // signature → attempts so far
  let draining: Promise<void> | null = null;
  let closed = false;

  const drainOnce = async (): Promise<void> => {
    const batch = [...queue.keys()].slice(0, MAX_BATCH);
    const raws = await rpc.getTransactions(batch);
    const found = raws.flatMap((raw) => (raw ? [raw] : []));
    if (found.length > 0) await store.ingest(found.map(decodeTransaction), "confirmed");
    raws.forEach((raw, i) => {
      const signature = batch[i]!;
      const attempts = (queue.get(signature) ?? 0) + 1;
      // The notification can come before the node answers at `confirmed`: retry a few times.
      if (raw || attempts >= RETRIES) queue.delete(signature);
      else queue.set(signature, attempts);
      if (raw) options.onIngested?.(signature);
    });
    if (found.length < batch.length) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  };

  const drain = () => {
    if (draining || closed) return;
    draining = (async () => {
      while (queue.size > 0 && !closed) await drainOnce().catch(options.onError);
    })().finally(() => {
      draining = null;
    });
  };

  const subscription = connection.onLogs(
    new PublicKey(PROGRAM_ADDRESS),
    (logs) => {
      if (logs.err !== null || closed) return;
      if (!queue.has(logs.signature)) queue.set(logs.signature, 0);
      drain();
    },
    "confirmed",
  );

  return {
    async close() {
      closed = true;
      await connection.removeOnLogsListener(subscription).catch(() => {});
      await draining;
      const socket = (connection as unknown as { _rpcWebSocket?: { close(code?: number): void; setAutoReconnect?(on: boolean): void } })._rpcWebSocket;
      try {
        socket?.setAutoReconnect?.(false);
        socket?.close(1000);
      } catch {
        // not connected
      }
    },
  };
}
