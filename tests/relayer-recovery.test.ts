// The relayer as a process of its own, killed with SIGKILL while an execution holds an open
// escrow: the next relayer finishes it, settled or refunded exactly once, the payer whole. And an
// RPC that does not answer: a clear 503 and nothing charged.
import { strict as assert } from "node:assert";
import { type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

import { escrowPda, parseExecutionId } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";
import pg from "pg";
import { freePort } from "@agent-market/service";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { errorCode, relayerEnv, startRelayerWith } from "./src/relayer.js";
import { reconcileCommand, spawnRelayer } from "./src/relayer-process.js";

/** The relayer's documented stop bound (relayer/src/shutdown.ts). */
const SHUTDOWN_BOUND_MS = 20_000;

const PRICE = 250_000n;

/**
 * The execution's state once it is settled or refunded, or as it stands after 60 s. The finish job
 * looks again after a backoff that doubles from 200 ms, so on a loaded machine the refund's
 * confirmation may be seen only at its eighth run, 25 s in.
 */
async function finalState(db: pg.Client, id: string): Promise<string> {
  let state = "";
  for (let i = 0; i < 600 && state !== "refunded" && state !== "settled"; i += 1) {
    state = (await db.query("SELECT state FROM executions WHERE id = $1", [id])).rows[0].state;
    if (state !== "refunded" && state !== "settled") await sleep(100);
  }
  return state;
}

describe("relayer: crashes and outages", function () {
  this.timeout(120_000);
  let market: TestMarket;
  const children: ChildProcess[] = [];
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(agents.map((a) => a.server.close()));
    await market?.stop();
  });

  it("finishes an execution exactly once after its relayer is killed with the escrow open", async () => {
    const port = await freePort();
    const env = await relayerEnv(market.localnet, { RELAYER_PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    const marketplaceKey = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(env.MARKETPLACE_KEYPAIR!, "utf8"))));
    const db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    try {
      const first = await spawnRelayer(env);
      children.push(first);
      const agent = await listAgent(market, { url, marketplaceKey }, { maxExecutionSecs: 20 });
      agents.push(agent);
      agent.server.behaviour = "slow";
      agent.server.delay_ms = 3_000;
      const payer = await newPayer(market, { url }, 1_000_000n);

      const probes = agent.server.received.length;
      const inFlight = execute({ url }, payer, agent.address).catch((error: unknown) => error);
      for (let i = 0; i < 100 && agent.server.received.length === probes; i += 1) await sleep(50);
      const id = agent.server.received[probes]?.body.execution_id;
      assert.ok(id, "the execution reached the creator");
      // A sync execution writes its escrow's facts with the result: until then the row says
      // `opening`, and that is the state the next relayer must finish from.
      const { rows: before } = await db.query("SELECT state FROM executions WHERE id = $1", [id]);
      assert.equal(before[0].state, "opening");
      first.kill("SIGKILL");
      await inFlight;
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n - PRICE, "the escrow holds the price");

      const second = await spawnRelayer(env);
      children.push(second);
      const state = await finalState(db, id!);
      assert.equal(state, "refunded", "the result was lost with the relayer: refunded");
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n, "the payer is whole");
      const escrow = escrowPda(parseExecutionId(id!)!, market.programId);
      assert.equal(await market.connection.getAccountInfo(escrow), null, "the escrow is closed");
      const history = await market.connection.getSignaturesForAddress(escrow, undefined, "confirmed");
      const landed = history.filter((entry) => entry.err === null);
      assert.equal(landed.length, 2, "open_escrow and one refund, nothing else");
      const row = (await db.query("SELECT refund_reason FROM executions WHERE id = $1", [id])).rows[0];
      assert.equal(row.refund_reason, "RelayerError");
      second.kill("SIGTERM");

      const clean = reconcileCommand(env);
      assert.equal(clean.status, 0, clean.stdout + clean.stderr);
      assert.match(clean.stdout, /devnet: 1 executions, 0 open escrows on chain, 0 differences/);
      await db.query("UPDATE executions SET state = 'settled' WHERE id = $1", [id]);
      const tampered = reconcileCommand(env);
      assert.equal(tampered.status, 1);
      assert.match(tampered.stdout, /devnet: 1 executions, 0 open escrows on chain, 3 differences/);
      assert.match(tampered.stdout, /settled in the database, but a refund landed too/);
      assert.match(tampered.stdout, /spent_usdc 0, but its executions and subscriptions add up to 250000/);
      assert.ok(tampered.stdout.includes(`"execution":"${id}"`));
      assert.match(tampered.stdout, /settled in the database, but its settle transaction did not land/);
    } finally {
      await db.end();
    }
  });

  it("on SIGTERM hands its in-flight execution to the finish job and exits within its bound; the next relayer refunds it", async () => {
    const port = await freePort();
    const env = await relayerEnv(market.localnet, { RELAYER_PORT: String(port), REDIS_URL: "" });
    const url = `http://127.0.0.1:${port}`;
    const marketplaceKey = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(env.MARKETPLACE_KEYPAIR!, "utf8"))));
    const db = new pg.Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    try {
      const first = await spawnRelayer(env);
      children.push(first);
      const agent = await listAgent(market, { url, marketplaceKey }, { maxExecutionSecs: 60 });
      agents.push(agent);
      agent.server.behaviour = "slow";
      agent.server.delay_ms = 40_000;
      const payer = await newPayer(market, { url }, 1_000_000n);
      const probes = agent.server.received.length;
      const inFlight = execute({ url }, payer, agent.address).catch((error: unknown) => error);
      for (let i = 0; i < 100 && agent.server.received.length === probes; i += 1) await sleep(50);
      const id = agent.server.received[probes]?.body.execution_id;
      assert.ok(id, "the execution reached the creator");

      const stopped_at = Date.now();
      const exit = new Promise<number | null>((resolve) => first.once("exit", (code) => resolve(code)));
      first.kill("SIGTERM");
      assert.equal(await exit, 0);
      assert.ok(Date.now() - stopped_at <= SHUTDOWN_BOUND_MS, "exited within its documented bound");
      await inFlight;
      const { rows: jobs } = await db.query("SELECT id FROM jobs WHERE id = $1", [`finish-${id}`]);
      assert.equal(jobs.length, 1, "the execution is the finish job's");
      const { rows: instances } = await db.query("SELECT id FROM relayer_instances");
      assert.equal(instances.length, 0, "the stopped relayer's heartbeat row is gone");

      const second = await spawnRelayer(env);
      children.push(second);
      const state = await finalState(db, id!);
      assert.equal(state, "refunded");
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n, "the payer is whole");
      const row = (await db.query("SELECT failure_code, refund_reason FROM executions WHERE id = $1", [id])).rows[0];
      assert.equal(row.failure_code, "relayer_error");
      assert.equal(row.refund_reason, "RelayerError");
      second.kill("SIGTERM");
    } finally {
      await db.end();
    }
  });

  it("answers 503 chain_unavailable and charges nothing when the RPC does not answer", async () => {
    const env = await relayerEnv(market.localnet);
    const healthy = await startRelayerWith(env, { dropDatabase: false });
    const agent = await listAgent(market, healthy);
    agents.push(agent);
    const payer = await newPayer(market, healthy, 1_000_000n);
    await healthy.close();
    const cut = await startRelayerWith({ ...env, DEVNET_RPC_URL: `http://127.0.0.1:${await freePort()}`, DEVNET_WS_URL: "ws://127.0.0.1:9" });
    try {
      const response = await execute(cut, payer, agent.address);
      assert.equal(response.status, 503);
      assert.equal(errorCode(response), "chain_unavailable");
      assert.equal(await market.usdc(payer.tokenAccount), 1_000_000n);
      const { rows } = await cut.services.db.query("SELECT count(*)::int AS n FROM executions");
      assert.equal(rows[0].n, 0, "no execution was started");
    } finally {
      await cut.close();
    }
  });
});
