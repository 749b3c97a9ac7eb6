import { strict as assert } from "node:assert";
import http from "node:http";
import net from "node:net";

import { startTestRelayer } from "./support.js";

/** Resolves once `socket` is closed, with whether the other side ended it. */
function closed(socket: net.Socket): Promise<boolean> {
  return new Promise((resolve) => {
    let ended = false;
    socket.on("end", () => (ended = true));
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(ended));
  });
}

describe("relayer shutdown", () => {
  it("does not wait on a connection that never sent a request, nor on an idle kept-alive one", async () => {
    const relayer = await startTestRelayer();
    await relayer.app.listen({ host: "127.0.0.1", port: 0 });
    const { port } = relayer.app.server.address() as net.AddressInfo;

    const silent = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => silent.once("connect", () => resolve()));
    const silentClosed = closed(silent);

    const agent = new http.Agent({ keepAlive: true });
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path: "/v1/openapi.json", agent }, (response) => {
          response.resume();
          response.on("end", () => resolve(response.statusCode!));
        })
        .on("error", reject);
    });
    assert.equal(status, 200);
    const [keptAlive] = Object.values(agent.freeSockets).flat();
    assert.ok(keptAlive, "the agent keeps the connection");
    const keptAliveClosed = closed(keptAlive);

    // Without closing the silent connection, this waits for Node's 60 s headers timeout and the
    // test's own 30 s timeout fails it.
    await relayer.close();
    assert.equal(await silentClosed, true, "the relayer ended the silent connection");
    assert.equal(await keptAliveClosed, true, "the relayer ended the kept-alive connection");
    agent.destroy();
  });
});
