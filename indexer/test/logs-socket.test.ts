// The live source's logs subscription against a WebSocket server standing in for the node: it
// subscribes, hears notices, opens again after a drop, and once closed neither retries nor
// reconnects, whatever state its socket was in.
import { strict as assert } from "node:assert";
import type { AddressInfo } from "node:net";

import { WebSocketServer, type WebSocket } from "ws";

import { RECONNECT_MS, subscribeLogs, type LogsNotice } from "../src/ingest/logs-socket.js";

const ADDRESS = "Prog1111111111111111111111111111111111111111";

interface Node {
  url: string;
  connections: WebSocket[];
  subscribes: unknown[];
  close(): Promise<void>;
}

/** A node that answers logsSubscribe, unless `refuse`, and records each connection and request. */
async function startNode(options: { refuse?: boolean; silent?: boolean } = {}): Promise<Node> {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const node: Node = {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: [],
    subscribes: [],
    close: () =>
      new Promise((resolve) => {
        for (const socket of server.clients) socket.terminate();
        server.close(() => resolve());
      }),
  };
  server.on("connection", (socket) => {
    node.connections.push(socket);
    socket.on("message", (data) => {
      const request = JSON.parse(String(data)) as { id: number; method: string; params: unknown[] };
      if (request.method !== "logsSubscribe") return;
      node.subscribes.push(request.params);
      if (options.silent) return;
      socket.send(JSON.stringify(options.refuse ? { jsonrpc: "2.0", id: request.id, error: { code: -32602, message: "no" } } : { jsonrpc: "2.0", id: request.id, result: 7 }));
    });
  });
  return node;
}

function notify(socket: WebSocket, signature: string, err: unknown = null): void {
  socket.send(JSON.stringify({ jsonrpc: "2.0", method: "logsNotification", params: { subscription: 7, result: { context: { slot: 1 }, value: { signature, err, logs: [] } } } }));
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 5_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the live source's logs socket", function () {
  this.timeout(20_000);

  it("subscribes to the program's logs at confirmed and passes each notice on", async () => {
    const node = await startNode();
    const notices: LogsNotice[] = [];
    const logs = subscribeLogs(node.url, ADDRESS, (notice) => notices.push(notice), () => {});
    try {
      await until(() => node.subscribes.length === 1, "the subscription");
      assert.deepEqual(node.subscribes[0], [{ mentions: [ADDRESS] }, { commitment: "confirmed" }]);
      notify(node.connections[0]!, "sig-1");
      notify(node.connections[0]!, "sig-2", { InstructionError: [0, "Custom"] });
      await until(() => notices.length === 2, "two notices");
      assert.deepEqual(notices, [
        { signature: "sig-1", err: null },
        { signature: "sig-2", err: { InstructionError: [0, "Custom"] } },
      ]);
    } finally {
      logs.close();
      await node.close();
    }
  });

  it("opens again after the node drops the socket, and subscribes again", async () => {
    const node = await startNode();
    const notices: LogsNotice[] = [];
    const errors: unknown[] = [];
    const logs = subscribeLogs(node.url, ADDRESS, (notice) => notices.push(notice), (err) => errors.push(err));
    try {
      await until(() => node.subscribes.length === 1, "the subscription");
      node.connections[0]!.terminate();
      await until(() => node.subscribes.length === 2, "the second subscription");
      notify(node.connections[1]!, "sig-after");
      await until(() => notices.length === 1, "the notice after the reconnect");
      assert.equal(notices[0]!.signature, "sig-after");
    } finally {
      logs.close();
      await node.close();
    }
  });

  it("reports a refused subscription once, not once per retry", async () => {
    const node = await startNode({ refuse: true });
    const errors: unknown[] = [];
    const logs = subscribeLogs(node.url, ADDRESS, () => {}, (err) => errors.push(err));
    try {
      await until(() => node.subscribes.length >= 3, "three tries");
      assert.equal(errors.length, 1);
      assert.match(String(errors[0]), /logsSubscribe was refused: no/);
    } finally {
      logs.close();
      await node.close();
    }
  });

  it("once closed, sends nothing more and never reconnects, even mid-subscribe or with the node gone", async () => {
    const node = await startNode({ silent: true });
    const logs = subscribeLogs(node.url, ADDRESS, () => {}, () => {});
    await until(() => node.subscribes.length === 1, "the subscription request");
    logs.close();
    await sleep(RECONNECT_MS * 2);
    assert.equal(node.connections.length, 1, "no new connection");
    assert.equal(node.subscribes.length, 1, "no request after close");
    await node.close();

    // Closed while the node is unreachable: nothing is left retrying.
    const gone = subscribeLogs(node.url, ADDRESS, () => {}, () => {});
    await sleep(100);
    gone.close();
    const before = process.memoryUsage().heapUsed;
    await sleep(RECONNECT_MS * 2);
    assert.ok(process.memoryUsage().heapUsed - before < 20 * 1024 * 1024, "no allocation loop after close");
  });
});
