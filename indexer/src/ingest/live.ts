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

export function startLive(rpcUrl: string, websocketUrl: string, rpc: SolanaRpc, store: EventStore, options: LiveOptions): LiveSource {
  const connection = new Connection(rpcUrl, { commitment: "confirmed", wsEndpoint: websocketUrl });
  const pending = new Set<Promise<void>>();
  let closed = false;

  const fetchAndIngest = async (signature: string): Promise<void> => {
    for (let attempt = 0; attempt < RETRIES && !closed; attempt++) {
      const [raw] = await rpc.getTransactions([signature]);
      if (raw) {
        await store.ingest([decodeTransaction(raw)], "confirmed");
        options.onIngested?.(signature);
        return;
      }
      // The notification can come before the node answers at `confirmed`.
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  };

  const subscription = connection.onLogs(
    new PublicKey(PROGRAM_ADDRESS),
    (logs) => {
      if (logs.err !== null || closed) return;
      const work = fetchAndIngest(logs.signature).catch(options.onError);
      pending.add(work);
      void work.finally(() => pending.delete(work));
    },
    "confirmed",
  );

  return {
    async close() {
      closed = true;
      await connection.removeOnLogsListener(subscription).catch(() => {});
      await Promise.allSettled([...pending]);
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
