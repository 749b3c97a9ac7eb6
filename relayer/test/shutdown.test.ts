import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { dropDatabase, ensureDatabase, freePort } from "@agent-market/service";

import { SHUTDOWN_BOUND_MS, SHUTDOWN_GRACE_MS } from "../src/shutdown.js";
import { databaseUrl, startTestRelayer, testEnv } from "./support.js";

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

/** `node dist/main.js` over a database of its own; resolves once it answers HTTP. */
async function spawnRelayer(): Promise<{ child: ChildProcess; port: number; stderr: () => string; url: string }> {
  const url = databaseUrl(`relayer_stop_${randomBytes(6).toString("hex")}`);
  await ensureDatabase(url);
  const port = await freePort();
  const child = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "main.js")], {
    env: { ...process.env, ...testEnv(url, { RELAYER_PORT: String(port), LOG_LEVEL: "warn" }) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  for (let i = 0; ; i += 1) {
    if (child.exitCode !== null) throw new Error(`the relayer exited: ${stderr}`);
    const up = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`).then((r) => r.ok, () => false);
    if (up) return { child, port, stderr: () => stderr, url };
    if (i > 200) throw new Error(`the relayer did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A request in flight: its headers sent, its body never finished. */
async function requestInFlight(port: number): Promise<net.Socket> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.on("error", () => undefined);
  socket.write("POST /v1/auth/nonce HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"wal");
  await new Promise((resolve) => setTimeout(resolve, 200));
  return socket;
}

function exited(child: ChildProcess): Promise<{ code: number | null; after_ms: number }> {
  const from = Date.now();
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, after_ms: Date.now() - from })));
}

describe("relayer process: stop signals", function () {
  this.timeout(60_000);

  it("on SIGTERM stops taking requests, gives those in flight the grace, and exits within its documented bound", async () => {
    const relayer = await spawnRelayer();
    try {
      const socket = await requestInFlight(relayer.port);
      const exit = exited(relayer.child);
      relayer.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(relayer.child.exitCode, null, "a request in flight is given its grace");
      const refused = await fetch(`http://127.0.0.1:${relayer.port}/v1/openapi.json`).then(() => false, () => true);
      assert.ok(refused, "no new request is taken");
      const { code, after_ms } = await exit;
      assert.equal(code, 0, relayer.stderr());
      assert.ok(after_ms <= SHUTDOWN_BOUND_MS, `exited after ${after_ms} ms`);
      assert.match(relayer.stderr(), /executions in flight handed to the finish job/);
      socket.destroy();
    } finally {
      relayer.child.kill("SIGKILL");
      await dropDatabase(relayer.url);
    }
  });

  it("exits at once on a second signal", async () => {
    const relayer = await spawnRelayer();
    try {
      const socket = await requestInFlight(relayer.port);
      const exit = exited(relayer.child);
      relayer.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(relayer.child.exitCode, null);
      relayer.child.kill("SIGINT");
      const { code, after_ms } = await exit;
      assert.equal(code, 1);
      assert.ok(after_ms < SHUTDOWN_GRACE_MS, `exited after ${after_ms} ms, before the grace ran out`);
      socket.destroy();
    } finally {
      relayer.child.kill("SIGKILL");
      await dropDatabase(relayer.url);
    }
  });
});
