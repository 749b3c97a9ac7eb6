// The live source's `logsSubscribe`, on a WebSocket of its own. web3.js's Connection retries a
// failed unsubscribe at once, for as long as its socket is closing: at shutdown against a node
// that was going away, that loop filled the heap within two minutes. Here closing is one
// `terminate()`: the node drops a closed socket's subscriptions itself. A socket that drops while
// open is opened again after a pause; what was notified meanwhile is the gap check's to find.
import WebSocket from "ws";

export interface LogsNotice {
  signature: string;
  /** The transaction's error, null when it succeeded. */
  err: unknown;
}

export interface LogsSocket {
  close(): void;
}

/** How long a dropped or refused socket waits before it is opened again. */
export const RECONNECT_MS = 1_000;
const SUBSCRIBE_ID = 1;

/**
 * Subscribes to the logs of transactions that mention `address` at `confirmed`. `onError` hears of
 * the first failure after each successful subscription, not of every refused reconnect.
 */
export function subscribeLogs(url: string, address: string, onLogs: (notice: LogsNotice) => void, onError: (err: unknown) => void): LogsSocket {
  let socket: WebSocket | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let reported = false;

  const fail = (err: unknown) => {
    if (reported) return;
    reported = true;
    onError(err);
  };

  const open = () => {
    if (closed) return;
    const ws = new WebSocket(url);
    socket = ws;
    ws.on("open", () => {
      ws.send(
        JSON.stringify({ jsonrpc: "2.0", id: SUBSCRIBE_ID, method: "logsSubscribe", params: [{ mentions: [address] }, { commitment: "confirmed" }] }),
      );
    });
    ws.on("message", (data) => {
      let message: { id?: number; method?: string; result?: unknown; error?: { message?: string }; params?: { result?: { value?: { signature?: unknown; err?: unknown } } } };
      try {
        message = JSON.parse(String(data));
      } catch (err) {
        fail(err);
        return;
      }
      if (message.method === "logsNotification") {
        const value = message.params?.result?.value;
        if (typeof value?.signature === "string") onLogs({ signature: value.signature, err: value.err ?? null });
      } else if (message.id === SUBSCRIBE_ID) {
        if (message.error) {
          fail(new Error(`logsSubscribe was refused: ${message.error.message ?? JSON.stringify(message.error)}`));
          ws.terminate();
        } else {
          reported = false;
        }
      }
    });
    // 'close' follows every 'error'.
    ws.on("error", fail);
    ws.on("close", () => {
      if (socket === ws) socket = null;
      if (!closed) timer = setTimeout(open, RECONNECT_MS);
    });
  };

  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      socket?.terminate();
      socket = null;
    },
  };
}
