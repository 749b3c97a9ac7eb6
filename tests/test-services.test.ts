// `npm test` on a machine where PostgreSQL and Redis are not running (issue: "the newcomer's other
// command"): scripts/test-services.mjs starts the embedded PostgreSQL npm start uses and
// redis-server, points the suites at them, and, without redis-server, stops with one line naming
// the package to install.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { createConnection } from "node:net";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import pg from "pg";

import { REPO_ROOT } from "@agent-market/local";

const SCRIPT = join(REPO_ROOT, "scripts", "test-services.mjs");
/** Addresses where nothing listens. */
const NOWHERE = { TEST_POSTGRES_URL: "postgres://postgres@127.0.0.1:1/postgres", TEST_REDIS_URL: "redis://127.0.0.1:1" };

function run(env: Record<string, string>) {
  return spawnSync(process.execPath, [SCRIPT], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
}

/** The shell lines the script printed, as variables. */
function exported(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split("\n")
      .map((line) => line.replace(/^export /, "").match(/^(\w+)='(.*)'$/)!)
      .map((match) => [match[1]!, match[2]!]),
  );
}

/** Redis's answer to PING, in its wire protocol. */
function redisPing(url: URL): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port) }, () => socket.write("PING\r\n"));
    socket.once("data", (answer) => {
      socket.destroy();
      resolve(answer.toString());
    });
    socket.once("error", reject);
  });
}

describe("npm test's servers", function () {
  this.timeout(180_000);

  it("starts PostgreSQL and Redis when none answers, and the suites reach them at the URLs it exports", async () => {
    const started = run(NOWHERE);
    assert.equal(started.status, 0, started.stderr);
    const vars = exported(started.stdout);
    const pids = vars.TEST_SERVICE_PIDS!.split(" ").map(Number);
    try {
      assert.equal(pids.length, 2);
      const client = new pg.Client({ connectionString: vars.TEST_POSTGRES_URL });
      await client.connect();
      assert.equal((await client.query("SELECT 1 AS one")).rows[0].one, 1);
      await client.end();
      assert.equal(await redisPing(new URL(vars.TEST_REDIS_URL!)), "+PONG\r\n");
    } finally {
      for (const pid of pids) process.kill(pid, "SIGTERM");
    }
  });

  it("leaves servers that answer alone", () => {
    const found = run({});
    assert.equal(found.status, 0, found.stderr);
    assert.equal(found.stdout, "TEST_SERVICE_PIDS=''\n");
  });

  it("without Redis and without redis-server, stops with one line naming the package", () => {
    // A PATH holding node alone: no redis-server to be found.
    const bin = mkdtempSync(join(tmpdir(), "no-redis-"));
    symlinkSync(process.execPath, join(bin, "node"));
    const refused = run({ TEST_REDIS_URL: NOWHERE.TEST_REDIS_URL, PATH: bin });
    assert.equal(refused.status, 1);
    assert.equal(refused.stdout, "");
    assert.match(refused.stderr, /^test services: no Redis at 127\.0\.0\.1:1 and no redis-server to start: install it \(Debian, Ubuntu: apt-get install redis-server/);
  });
});
