// Two relayer processes of one deployment (one PostgreSQL database, one Redis queue), escrows
// opened and settled in batches: a burst of calls across both, one of them killed with SIGKILL in
// the middle of it. The other finishes what the dead one left: every escrow closed exactly once,
// nothing charged twice, every settled call paid 99/1, and the reconciliation finds no difference.
import { strict as assert } from "node:assert";
import { type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

import { escrowPda, parseExecutionId, splitPayment } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";
import pg from "pg";
import { freePort } from "@agent-market/service";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, feeShardsTotal, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { relayerEnv } from "./src/relayer.js";
import { reconcileCommand, spawnRelayer } from "./src/relayer-process.js";

const PRICE = 250_000n;
const CALLS = 48;

describe("relayer: two instances on one database, one killed mid-burst", function () {
  this.timeout(180_000);
  let market: TestMarket;
  const children: ChildProcess[] = [];
  let agent: ListedAgent | undefined;

  before(async () => {
    market = await TestMarket.start();
  });
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await agent?.server.close();
    await market?.stop();
  });

  it("closes every escrow exactly once, charges nothing twice, and reconciles to 0 differences", async () => {
    const ports = [await freePort(), await freePort()];
    const shared = await relayerEnv(market.localnet, { BATCH_OPENS: "true" });
    const envs = ports.map((port) => ({ ...shared, RELAYER_PORT: String(port) }));
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const db = new pg.Client({ connectionString: shared.DATABASE_URL });
    await db.connect();
    try {
      for (const env of envs) children.push(await spawnRelayer(env));
      const marketplaceKey = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(shared.MARKETPLACE_KEYPAIR!, "utf8"))));
      agent = await listAgent(market, { url: urls[0]!, marketplaceKey }, { maxExecutionSecs: 20 });
      agent.server.sign_batch = true;
      agent.server.behaviour = "slow";
      agent.server.delay_ms = 400;
      const payer = await newPayer(market, { url: urls[0]! }, PRICE * BigInt(CALLS));
      const creatorBefore = await market.usdc(agent.creator.tokenAccount);
      const feesBefore = await feeShardsTotal(market);

      // Calls every 20 ms, alternating between the two; the first is killed a third of the way in.
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < CALLS; i += 1) {
        calls.push(execute({ url: urls[i % 2]! }, payer, agent.address).catch((error: unknown) => error));
        if (i === CALLS / 3) children[0]!.kill("SIGKILL");
        await sleep(20);
      }
      await Promise.all(calls);

      // The survivor's sweep takes the dead one's executions over once its heartbeat is stale.
      const deadline = Date.now() + 90_000;
      let rows: { id: string; state: string }[] = [];
      for (;;) {
        rows = (await db.query("SELECT id, state FROM executions")).rows;
        if (rows.every((row) => ["settled", "refunded", "failed"].includes(row.state))) break;
        if (Date.now() > deadline) throw new Error(`unfinished: ${JSON.stringify(rows.filter((r) => !["settled", "refunded", "failed"].includes(r.state)))}`);
        await sleep(250);
      }
      const settled = rows.filter((row) => row.state === "settled");
      assert.ok(settled.length > 0 && rows.length > CALLS / 3, `${settled.length} settled of ${rows.length}`);
      const taken = await db.query("SELECT count(*)::int AS n FROM executions WHERE refund_reason = 'RelayerError'");
      assert.ok(taken.rows[0].n > 0, "the dead relayer's calls in flight were finished by the other");

      const { creatorShareUsdc, feeUsdc } = splitPayment(PRICE);
      assert.equal(await market.usdc(payer.tokenAccount), PRICE * BigInt(CALLS - settled.length), "charged once per settled call, nothing else");
      assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + creatorShareUsdc * BigInt(settled.length));
      assert.equal(await feeShardsTotal(market), feesBefore + feeUsdc * BigInt(settled.length));
      for (const row of rows.filter((row) => row.state !== "failed")) {
        const escrow = escrowPda(parseExecutionId(row.id)!, market.programId);
        assert.equal(await market.connection.getAccountInfo(escrow), null, `${row.id}'s escrow is closed`);
        const landed = (await market.connection.getSignaturesForAddress(escrow, undefined, "confirmed")).filter((e) => e.err === null);
        assert.equal(landed.length, 2, `${row.id}: its open and one settlement or refund, nothing else`);
      }

      const report = reconcileCommand(envs[1]!);
      assert.equal(report.status, 0, report.stdout + report.stderr);
      assert.match(report.stdout, new RegExp(`devnet: ${rows.length} executions, 0 open escrows on chain, 0 differences`));
    } finally {
      await db.end();
    }
  });
});
