// The local marketplace exactly as `npm start` runs it (its own PostgreSQL, in-process jobs),
// under bursts of concurrent executions: one escrow per Idempotency-Key, every execution without
// one charged once, the chain and the database in agreement, and no 5xx. Then its supervisor:
// the relayer and the indexer killed with SIGKILL come back on their own, the indexer with what
// ran while it was down, which discovery then shows.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

import { REPO_ROOT, type LocalMarketplace } from "@agent-market/local";
import type { Connection, PublicKey } from "@solana/web3.js";

import { startLocalTestMarket, type LocalTestMarket } from "./src/local-market.js";

const ECHO_PRICE = 10_000n;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
}

describe("npm start's marketplace under concurrent executions", function () {
  this.timeout(300_000);
  let local: LocalTestMarket | undefined;
  let marketplace: LocalMarketplace;
  let connection: Connection;
  let payerToken: PublicKey;
  let echo: string;
  const logs: string[] = [];

  before(async () => {
    local = await startLocalTestMarket("agent-market-burst-", { log: (line) => logs.push(line), supervision: { backoff_ms: 100 } });
    ({ marketplace, connection, payerToken, echo } = local);
  });
  after(async () => {
    await local?.stop();
  });

  async function execute(task: string, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(`${marketplace.relayer_url}/v1/agents/${echo}/execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${marketplace.api_key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ task, parameters: {} }),
    });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      replayed: response.headers.get("idempotent-replayed") === "true",
    };
  }

  async function payerUsdc(): Promise<bigint> {
    return BigInt((await connection.getTokenAccountBalance(payerToken)).value.amount);
  }

  /** Polls until the chain shows `expected` for the payer and reconciliation finds 0 differences. */
  async function settledAt(expected: bigint): Promise<string> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const balance = await payerUsdc();
      const reconcile = spawnSync(process.execPath, [join(REPO_ROOT, "relayer", "dist", "reconcile-main.js")], {
        env: { ...process.env, ...marketplace.relayer_env },
        encoding: "utf8",
      });
      if (balance === expected && reconcile.status === 0) return reconcile.stdout;
      if (Date.now() > deadline) {
        assert.fail(`payer ${balance} (expected ${expected}); agent-market-reconcile exit ${reconcile.status}:\n${reconcile.stdout}${reconcile.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  function assertNo5xx(answers: Answer[]): void {
    const failed = answers.filter((answer) => answer.status >= 500);
    assert.deepEqual(failed, [], "no 5xx");
  }

  it("opens exactly one escrow for 50 concurrent requests with one Idempotency-Key", async () => {
    const before = await payerUsdc();
    const answers = await Promise.all(Array.from({ length: 50 }, () => execute("one order", { "idempotency-key": "burst-order-1" })));
    assertNo5xx(answers);
    const ok = answers.filter((answer) => answer.status === 200);
    const busy = answers.filter((answer) => answer.status === 409);
    assert.equal(ok.length + busy.length, 50, answers.map((answer) => answer.status).join(","));
    assert.ok(ok.length >= 1);
    assert.equal(new Set(ok.map((answer) => answer.body.id)).size, 1, "one execution");
    assert.equal(ok.filter((answer) => !answer.replayed).length, 1, "the others replay the first answer");
    for (const answer of busy) {
      const error = answer.body.error as Record<string, unknown> | undefined;
      assert.equal(error?.code, "idempotency_request_in_progress", JSON.stringify(answer.body));
      assert.equal(typeof error?.message, "string");
      assert.equal(typeof error?.request_id, "string");
    }
    const after = await settledAt(before - ECHO_PRICE);
    assert.match(after, /devnet: \d+ executions, 0 open escrows on chain, 0 differences/);
    const again = await execute("one order", { "idempotency-key": "burst-order-1" });
    assert.equal(again.status, 200);
    assert.ok(again.replayed);
    assert.equal(again.body.id, ok[0]!.body.id);
  });

  it("runs 64 concurrent executions without a key, each charged once, reconciled with the chain", async () => {
    const before = await payerUsdc();
    const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => execute(`task ${i}`)));
    assertNo5xx(answers);
    assert.deepEqual(
      answers.filter((answer) => answer.status !== 200).map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`),
      [],
    );
    assert.ok(answers.every((answer) => answer.body.status === "succeeded"));
    assert.equal(new Set(answers.map((answer) => answer.body.id)).size, 64);
    const after = await settledAt(before - 64n * ECHO_PRICE);
    assert.match(after, /0 open escrows on chain, 0 differences/);
  });

  it("restarts the relayer when it is killed, and serves again", async () => {
    const killed = marketplace.processes.relayer.pid!;
    process.kill(killed, "SIGKILL");
    const deadline = Date.now() + 60_000;
    while (marketplace.processes.relayer.pid === killed || !(await serving(marketplace.relayer_url))) {
      if (Date.now() > deadline) assert.fail(`the relayer did not come back:\n${logs.join("\n")}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(logs.some((line) => line.startsWith("relayer exited unexpectedly (signal SIGKILL); restarting it in 100 ms")));
    const answer = await execute("after the restart");
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  });

  it("restarts the indexer when it is killed; it then shows what ran meanwhile, and discovery its figures", async () => {
    const killed = marketplace.processes.indexer.pid!;
    process.kill(killed, "SIGKILL");
    const answer = await execute("while the indexer is down");
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const indexed = await indexedState(marketplace.indexer_url, answer.body.id as string);
      if (marketplace.processes.indexer.pid !== killed && indexed === "SETTLED") break;
      if (Date.now() > deadline) assert.fail(`the indexer did not come back with the execution (${indexed}):\n${logs.join("\n")}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(logs.some((line) => line.startsWith("indexer exited unexpectedly (signal SIGKILL); restarting it in 100 ms")));
    // The relayer's snapshot of the indexer is at most a few seconds old.
    for (;;) {
      const listing = (await (await fetch(`${marketplace.relayer_url}/v1/agents/${echo}`)).json()) as { health: { status: string; success_rate_24h: number | null } };
      if (listing.health.status === "operational") {
        assert.equal(listing.health.success_rate_24h, 1);
        break;
      }
      if (Date.now() > deadline) assert.fail(`the listing shows ${JSON.stringify(listing.health)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
});

/** The execution's state in the indexer's GraphQL; undefined while it does not answer. */
async function indexedState(url: string, id: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "query($id: ID!) { execution(id: $id) { state } }", variables: { id } }),
    });
    return ((await response.json()) as { data?: { execution: { state: string } | null } }).data?.execution?.state;
  } catch {
    return undefined;
  }
}

async function serving(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/v1/openapi.json`)).ok;
  } catch {
    return false;
  }
}
