// `npm start` as a new user runs it: it comes up, the curl it prints executes an agent (which its
// indexer then shows over GraphQL with the chain's amount), Ctrl-C
// stops every process, and the next start finds the same key working. A process that dies and
// cannot be restarted stops it whole, and a data folder of an earlier version is refused with
// the way to reset it.
import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { legacyDatabaseMessage } from "@agent-market/local";
import { freePortBlock } from "@agent-market/service";

import { MARKETPLACE_PORTS } from "./src/local-market.js";
import { REPO_ROOT } from "./src/localnet.js";

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** npm start's entry point with `env`, everything it prints collected. */
function spawnStart(env: Record<string, string>): Started {
  const child = spawn(process.execPath, [join(REPO_ROOT, "sdk", "local", "dist", "start.js")], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function start(env: Record<string, string>): Promise<Started> {
  const started = spawnStart(env);
  const deadline = Date.now() + 90_000;
  while (!started.output().includes("Ctrl-C stops everything")) {
    if (started.child.exitCode !== null) throw new Error(`npm start exited (${started.child.exitCode}):\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`npm start did not come up:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return started;
}

/**
 * `start` on ports free a moment ago: between choosing a port and npm start listening on it, an
 * outgoing connection of anything else on the machine can take it as its own local port; that
 * start is retried on other ports.
 */
async function startOnFreePorts(base: Record<string, string>): Promise<{ started: Started; env: Record<string, string> }> {
  for (let attempt = 1; ; attempt += 1) {
    const env = { ...base, ...(await ports()) };
    try {
      return { started: await start(env), env };
    } catch (error) {
      if (attempt >= 3 || !/is in use|EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

/** The execution as the indexer's GraphQL shows it, once it has ingested its settlement. */
async function indexedExecution(url: string, id: string): Promise<unknown> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "query($id: ID!) { execution(id: $id) { state amount { usdc } } }", variables: { id } }),
    });
    const { data } = (await response.json()) as { data?: { execution: { state: string } | null } };
    if (data?.execution?.state === "SETTLED" || Date.now() > deadline) return data?.execution;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The printed curl, run with fetch: URL, headers and body exactly as printed. */
async function runPrintedCurl(output: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = /curl -s (\S+)/.exec(output)![1]!;
  const key = /Authorization: Bearer (svc_test_\w+)/.exec(output)![1]!;
  const body = /-d '(.*)'/.exec(output)![1]!;
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

async function stop(started: Started): Promise<number | null> {
  started.child.kill("SIGINT");
  return exitOf(started.child);
}

/** The processes npm start runs now, from its data folder. */
function processes(data: string): Record<string, number> {
  const listed = JSON.parse(readFileSync(join(data, "processes.json"), "utf8")) as { name: string; pid: number }[];
  return Object.fromEntries(listed.map(({ name, pid }) => [name, pid]));
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ports(): Promise<{ RELAYER_PORT: string; INDEXER_PORT: string; LOCALNET_PORT: string; AGENTS_PORT: string; POSTGRES_PORT: string }> {
  const first = await freePortBlock(MARKETPLACE_PORTS);
  return {
    LOCALNET_PORT: String(first),
    RELAYER_PORT: String(first + 2),
    AGENTS_PORT: String(first + 3),
    POSTGRES_PORT: String(first + 8),
    INDEXER_PORT: String(first + 9),
  };
}

describe("npm start: the local marketplace", function () {
  this.timeout(240_000);
  const data = mkdtempSync(join(tmpdir(), "agent-market-start-"));
  after(() => rmSync(data, { recursive: true, force: true }));

  it("comes up, answers its printed curl, stops on Ctrl-C, and keeps its key across a restart", async () => {
    const env = { AGENT_MARKET_DATA: data, ...(await ports()) };
    const rpc = env.LOCALNET_PORT;
    const first = await start(env);
    const pids = processes(data);
    assert.deepEqual(Object.keys(pids), ["postgres", "localnet", "relayer", "indexer"]);
    const key = /AGENT_MARKET_API_KEY=(svc_test_\w+)/.exec(first.output())![1];
    const executed = await runPrintedCurl(first.output());
    assert.equal(executed.status, 200, JSON.stringify(executed.body));
    assert.equal(executed.body.status, "succeeded");
    assert.equal((executed.body.charge as { amount_usdc: string }).amount_usdc, "0.050000");
    const indexerUrl = new RegExp(`indexer +(http://127\\.0\\.0\\.1:${env.INDEXER_PORT}/graphql)`).exec(first.output())![1]!;
    const indexed = await indexedExecution(indexerUrl, executed.body.id as string);
    assert.deepEqual(indexed, { state: "SETTLED", amount: { usdc: "0.050000" } }, "the execution, with the chain's amount, in the indexer's GraphQL");
    // The starter host, on the port after the four example agents', answers only for agents it holds a key for.
    const starterUrl = new RegExp(`starter agents +(http://127\\.0\\.0\\.1:${Number(env.AGENTS_PORT) + 4})/agents/`).exec(first.output())![1]!;
    const unknownAgent = await fetch(`${starterUrl}/agents/${"1".repeat(32)}/health`);
    assert.equal(unknownAgent.status, 403);
    assert.equal(((await unknownAgent.json()) as { error: { code: string } }).error.code, "agent_not_served");
    assert.equal(await stop(first), 0);
    assert.match(first.output(), /stopped/);
    await assert.rejects(fetch(`http://127.0.0.1:${env.RELAYER_PORT}/v1/marketplace`), "the relayer stopped");
    await assert.rejects(fetch(`http://127.0.0.1:${rpc}`), "localnet stopped");
    await assert.rejects(fetch(indexerUrl), "the indexer stopped");
    await assert.rejects(fetch(starterUrl), "the starter host stopped");
    assert.deepEqual(Object.values(pids).filter(running), [], "every process stopped, PostgreSQL included");

    const second = await start(env);
    try {
      assert.equal(/AGENT_MARKET_API_KEY=(svc_test_\w+)/.exec(second.output())![1], key, "the same key");
      const again = await runPrintedCurl(second.output());
      assert.equal(again.status, 200, JSON.stringify(again.body));
    } finally {
      assert.equal(await stop(second), 0);
    }
  });

  it("stops whole, exiting 1 with the reason, when localnet dies (a restart could lose its last slot)", async () => {
    const own = mkdtempSync(join(tmpdir(), "agent-market-start-"));
    try {
      const { started, env } = await startOnFreePorts({ AGENT_MARKET_DATA: own });
      const pids = processes(own);
      process.kill(pids.localnet!, "SIGKILL");
      assert.equal(await exitOf(started.child), 1);
      assert.match(started.output(), /npm start stopped: localnet exited unexpectedly \(signal SIGKILL\), and a restart is not safe/);
      assert.deepEqual(Object.values(pids).filter(running), [], "no half-alive marketplace");
      await assert.rejects(fetch(`http://127.0.0.1:${env.RELAYER_PORT}/v1/marketplace`), "the relayer stopped");
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("refuses a data folder of the PGlite era, saying how to reset it", async () => {
    const old = mkdtempSync(join(tmpdir(), "agent-market-pglite-"));
    try {
      mkdirSync(join(old, "pgdata"));
      const { child, output } = spawnStart({ AGENT_MARKET_DATA: old, ...(await ports()) });
      assert.equal(await exitOf(child), 1);
      assert.equal(output(), `npm start failed: ${legacyDatabaseMessage(old)}\n`);
      assert.match(output(), new RegExp(`\n  rm -rf ${old}\n  npm start$`, "m"));
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });

  it("refuses ports that overlap before starting anything, naming both variables (localnet's websocket is LOCALNET_PORT + 1)", async () => {
    const own = mkdtempSync(join(tmpdir(), "agent-market-start-"));
    const env = { AGENT_MARKET_DATA: own, ...(await ports()) };
    env.RELAYER_PORT = String(Number(env.LOCALNET_PORT) + 1);
    try {
      const { child, output } = spawnStart(env);
      assert.equal(await exitOf(child), 1);
      assert.match(
        output(),
        new RegExp(`npm start failed: port ${env.RELAYER_PORT} is asked for twice \\(LOCALNET_PORT and RELAYER_PORT\\): choose ports that do not overlap`),
      );
      assert.doesNotMatch(output(), /starting (PostgreSQL|localnet)/, "nothing was started");
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  for (const variable of ["RELAYER_PORT", "INDEXER_PORT"] as const) {
    it(`refuses a port in use, naming the variable that moves it (${variable})`, async () => {
      const own = mkdtempSync(join(tmpdir(), "agent-market-start-"));
      const env = { AGENT_MARKET_DATA: own, ...(await ports()) };
      const taken = createServer().listen(Number(env[variable]), "127.0.0.1");
      try {
        const { child, output } = spawnStart(env);
        assert.equal(await exitOf(child), 1);
        assert.match(
          output(),
          new RegExp(`npm start failed: port ${env[variable]} is in use \\(another npm start, or another program\\): stop it, or choose another port with ${variable}=…`),
        );
      } finally {
        taken.close();
        rmSync(own, { recursive: true, force: true });
      }
    });
  }
});
