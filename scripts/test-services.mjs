#!/usr/bin/env node
// The servers the test suites need, started when they are not already there, so that `npm test`
// runs on a machine that has neither (README, "Run it"): PostgreSQL at TEST_POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432/postgres), else the embedded PostgreSQL `npm start` runs, on
// a free port with a cluster of its own; Redis at TEST_REDIS_URL (default redis://127.0.0.1:6379),
// else `redis-server` when it is installed, on a free port, and otherwise one line naming the
// package to install. Prints the shell lines that point the tests at them (and TEST_SERVICE_PIDS,
// the servers to stop afterwards); writes its progress to stderr.
//
//   eval "$(node scripts/test-services.mjs)"
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const log = (line) => process.stderr.write(`test services: ${line}\n`);

/** Whether something accepts TCP connections at host:port within a second. */
function listening(host, port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port: Number(port) });
    const done = (answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const shellQuote = (value) => `'${String(value).replaceAll("'", "'\\''")}'`;

async function postgres(exports, pids) {
  const url = new URL(process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  if (await listening(url.hostname, url.port || 5432)) return;
  log(`no PostgreSQL at ${url.host}: starting the embedded PostgreSQL npm start uses`);
  const { preparePostgres, untilAccepting } = await import("@agent-market/local");
  const port = await freePort();
  const password = Math.random().toString(36).slice(2);
  const server = preparePostgres({ data_dir: mkdtempSync(join(tmpdir(), "agent-market-test-postgres-")), port, password, log });
  const child = spawn(server.command, server.args, {
    env: server.env,
    detached: true,
    stdio: "ignore",
    ...(server.uid === undefined ? {} : { uid: server.uid, gid: server.gid }),
  });
  child.unref();
  let running = true;
  child.once("exit", () => (running = false));
  await untilAccepting(server.url, () => running);
  if (!running) throw new Error("the embedded PostgreSQL exited at its start");
  const maintenance = new URL(server.url);
  maintenance.pathname = "/postgres";
  exports.TEST_POSTGRES_URL = maintenance.href;
  pids.push(child.pid);
  log(`PostgreSQL on 127.0.0.1:${port}`);
}

async function redis(exports, pids) {
  const url = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
  if (await listening(url.hostname, url.port || 6379)) return;
  if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) {
    throw new Error(
      `no Redis at ${url.host} and no redis-server to start: install it (Debian, Ubuntu: apt-get install redis-server; macOS: brew install redis) or set TEST_REDIS_URL`,
    );
  }
  const port = await freePort();
  log(`no Redis at ${url.host}: starting redis-server on 127.0.0.1:${port}`);
  const child = spawn("redis-server", ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no"], {
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  for (let waited = 0; !(await listening("127.0.0.1", port)); waited += 100) {
    if (waited > 10_000 || child.exitCode !== null) throw new Error("redis-server did not start");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  exports.TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
  pids.push(child.pid);
}

const exports = {};
const pids = [];
try {
  await postgres(exports, pids);
  await redis(exports, pids);
} catch (error) {
  for (const pid of pids) process.kill(pid, "SIGTERM");
  process.stderr.write(`test services: ${error.message}\n`);
  process.exit(1);
}
for (const [name, value] of Object.entries(exports)) process.stdout.write(`export ${name}=${shellQuote(value)}\n`);
process.stdout.write(`TEST_SERVICE_PIDS=${shellQuote(pids.join(" "))}\n`);
