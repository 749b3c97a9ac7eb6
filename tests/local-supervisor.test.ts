// The supervisor `npm start` runs its processes under, with real processes: a small HTTP server
// in node stands for each of them, and the tests kill them with SIGKILL.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Supervisor, type ChildSpec, type SupervisorOptions } from "@agent-market/local";
import { freePort } from "@agent-market/service";


/** A server answering its PID; `ignore_term` makes it deaf to SIGTERM. */
function server(name: string, port: number, on_exit: ChildSpec["on_exit"], extra: Partial<ChildSpec> = {}, ignore_term = false): ChildSpec {
  const script = `
    ${ignore_term ? "process.on('SIGTERM', () => console.log('ignoring SIGTERM'));" : ""}
    require("node:http").createServer((_, res) => res.end(String(process.pid)))
      .listen(${port}, "127.0.0.1", () => console.log("${name} serving as " + process.pid));`;
  return {
    name,
    command: process.execPath,
    args: ["-e", script],
    ready: async (child) => {
      while (child.exitCode === null && child.signalCode === null) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}`)).ok) return;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    on_exit,
    ...extra,
  };
}

async function answers(port: number): Promise<number | undefined> {
  try {
    return Number(await (await fetch(`http://127.0.0.1:${port}`)).text());
  } catch {
    return undefined;
  }
}

async function until(what: string, holds: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("npm start's supervisor", function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), "agent-market-supervisor-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let supervisors: Supervisor[] = [];
  afterEach(async () => {
    await Promise.all(supervisors.map((s) => s.stop()));
    supervisors = [];
  });

  function supervisor(options: Partial<SupervisorOptions> = {}) {
    const logs: string[] = [];
    const fatal: string[] = [];
    const run = mkdtempSync(join(dir, "run-"));
    const created = new Supervisor({
      log: (line) => logs.push(line),
      log_dir: join(run, "logs"),
      pid_file: join(run, "processes.json"),
      on_fatal: (reason) => fatal.push(reason),
      backoff_ms: 50,
      ...options,
    });
    supervisors.push(created);
    return { supervisor: created, logs, fatal, run };
  }

  it("restarts a child killed with SIGKILL, reporting the exit and its last lines", async () => {
    const { supervisor: s, logs, fatal } = supervisor();
    const port = await freePort();
    const child = await s.start(server("relayer", port, "restart"));
    const first = child.process.pid!;
    assert.equal(await answers(port), first);

    process.kill(first, "SIGKILL");
    await until("the restart", () => child.restarts === 1);
    const second = child.process.pid!;
    assert.notEqual(second, first);
    assert.equal(await answers(port), second);
    const report = logs.find((line) => line.startsWith("relayer exited unexpectedly"))!;
    assert.match(report, /\(signal SIGKILL\); restarting it in 50 ms/);
    assert.match(report, new RegExp(`relayer serving as ${first}`), "the report carries the child's last lines");
    assert.ok(logs.includes(`relayer restarted (PID ${second})`));
    assert.deepEqual(fatal, []);
  });

  it("stops every child, and says why, when one that must not be restarted dies", async () => {
    const { supervisor: s, fatal } = supervisor();
    const [dbPort, chainPort] = [await freePort(), await freePort()];
    const db = await s.start(server("postgres", dbPort, "restart"));
    const chain = await s.start(server("localnet", chainPort, { stop: "a restart could lose its last slot" }));

    process.kill(chain.process.pid!, "SIGKILL");
    await until("the marketplace to stop", () => fatal.length === 1);
    assert.match(fatal[0]!, /^localnet exited unexpectedly \(signal SIGKILL\), and a restart could lose its last slot; its last lines:\n {2}localnet serving as/);
    assert.equal(s.failure, fatal[0]);
    assert.notEqual(db.process.signalCode ?? db.process.exitCode, null, "no half-alive marketplace: the other child stopped too");
    assert.equal(await answers(dbPort), undefined);
  });

  it("gives up on a child that keeps dying, and stops the others", async () => {
    const { supervisor: s, fatal } = supervisor({ max_restarts: 2, restart_window_ms: 60_000 });
    const [otherPort, port] = [await freePort(), await freePort()];
    const other = await s.start(server("postgres", otherPort, "restart"));
    const child = await s.start(server("relayer", port, "restart"));
    for (let restarts = 1; restarts <= 2; restarts += 1) {
      process.kill(child.process.pid!, "SIGKILL");
      await until(`restart ${restarts}`, () => child.restarts === restarts);
    }
    process.kill(child.process.pid!, "SIGKILL");
    await until("the marketplace to stop", () => fatal.length === 1);
    assert.match(fatal[0]!, /^relayer exited 3 times within 60 s \(last: signal SIGKILL\)/);
    assert.notEqual(other.process.signalCode ?? other.process.exitCode, null);
  });

  it("stops in the reverse order of starting, killing a child that outlives its bound", async () => {
    const { supervisor: s, logs } = supervisor();
    const stopped: string[] = [];
    const db = await s.start(server("postgres", await freePort(), "restart", { stop_signal: "SIGINT" }));
    const relayer = await s.start(server("relayer", await freePort(), "restart", { stop_timeout_ms: 500 }, true));
    db.process.once("exit", () => stopped.push("postgres"));
    relayer.process.once("exit", (_code, signal) => stopped.push(`relayer ${signal}`));
    const began = Date.now();
    await s.stop();
    assert.deepEqual(stopped, ["relayer SIGKILL", "postgres"]);
    assert.ok(Date.now() - began >= 500, "the relayer had its bound");
    assert.ok(logs.includes("relayer did not stop within 0.5 s: killing it"));
  });

  it("signals each child once when a stop is asked again while one is under way", async () => {
    const { supervisor: s, run } = supervisor();
    await s.start(server("relayer", await freePort(), "restart", { stop_timeout_ms: 500 }, true));
    await Promise.all([s.stop(), s.stop()]);
    const path = join(run, "logs", "relayer.log");
    await until("the relayer's log", () => readFileSync(path, "utf8").includes("ignoring SIGTERM"));
    const log = readFileSync(path, "utf8");
    assert.equal(log.match(/ignoring SIGTERM/g)?.length, 1, log);
  });

  it("kills every child at once on a second signal, without waiting for the bound", async () => {
    const { supervisor: s } = supervisor();
    const db = await s.start(server("postgres", await freePort(), "restart"));
    const relayer = await s.start(server("relayer", await freePort(), "restart", { stop_timeout_ms: 30_000 }, true));
    const stopping = s.stop();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(relayer.process.exitCode ?? relayer.process.signalCode, null, "the relayer ignores SIGTERM");
    s.kill();
    await until("both children to die", () => relayer.process.signalCode === "SIGKILL" && db.process.signalCode === "SIGKILL", 5_000);
    await stopping;
  });

  it("stops what a supervisor killed outright left running", async () => {
    // What a killed supervisor leaves: a child in its own process group, and the PID file.
    const run = mkdtempSync(join(dir, "killed-"));
    const port = await freePort();
    const spec = server("localnet", port, "restart");
    const orphan = spawn(spec.command, spec.args, { detached: true, stdio: "ignore" });
    await spec.ready(orphan);
    writeFileSync(
      join(run, "processes.json"),
      JSON.stringify([{ name: "localnet", pid: orphan.pid, command: process.execPath, stop_signal: "SIGTERM" }]),
    );
    const logs: string[] = [];
    const next = new Supervisor({
      log: (line) => logs.push(line),
      log_dir: join(run, "logs"),
      pid_file: join(run, "processes.json"),
      on_fatal: () => undefined,
    });
    assert.deepEqual(await next.stopLeftovers(), ["localnet"]);
    assert.equal(await answers(port), undefined);
    await until("the leftover to exit", () => orphan.exitCode !== null || orphan.signalCode !== null);
    assert.deepEqual(logs, [`stopping localnet (PID ${orphan.pid}), left running by an earlier start that was killed`]);
    assert.deepEqual(await next.stopLeftovers(), [], "nothing twice");
  });

  it("leaves alone a recorded PID that now runs another command", async () => {
    const run = mkdtempSync(join(dir, "reused-"));
    writeFileSync(
      join(run, "processes.json"),
      JSON.stringify([{ name: "localnet", pid: process.pid, command: "/nonexistent/localnet", stop_signal: "SIGTERM" }]),
    );
    const next = new Supervisor({ log: () => undefined, log_dir: join(run, "logs"), pid_file: join(run, "processes.json"), on_fatal: () => undefined });
    assert.deepEqual(await next.stopLeftovers(), []);
  });
});
