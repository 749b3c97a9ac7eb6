// Fault injection with the relayer kept running: the database (a failing statement, connections
// dropped mid-statement) and the RPC (an error, an answer lost, a stall until the client's timeout)
// fail at each step of an execution. Each execution ends settled or refunded exactly once, the
// balances on chain are exact to the unit, and reconciliation finds nothing. The relayer runs
// without Redis (its in-process queue over PostgreSQL), as the embedded marketplace does.
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { escrowPda, fetchMarket, parseExecutionId, splitPayment, updateMarketInstruction } from "@agent-market/program";
import { ensureDatabase, freePort } from "@agent-market/service";
import { utils } from "@coral-xyz/anchor";
import pg from "pg";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, expectReconciled, startRelayer, type ApiResponse, type RunningRelayer } from "./src/relayer.js";
import { startRpcProxy, type RpcProxy } from "./src/rpc-proxy.js";

const PRICE = 250_000n;
const FUNDS = 1_000_000n;

// Faults armed by the test inside the relayer's own database: a row in test_faults turns one on.
const FAULT_TRIGGER = `
CREATE TABLE test_faults (name text PRIMARY KEY);
CREATE FUNCTION test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.state = 'settling' AND OLD.state <> 'settling' THEN
    IF EXISTS (SELECT 1 FROM test_faults WHERE name = 'settle_error') THEN
      RAISE EXCEPTION 'injected fault: the result''s write fails';
    END IF;
    IF EXISTS (SELECT 1 FROM test_faults WHERE name = 'settle_slow') THEN
      PERFORM pg_sleep(5);
    END IF;
  END IF;
  IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM test_faults WHERE name = 'insert_error') THEN
    RAISE EXCEPTION 'injected fault: the insert fails';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER test_fault BEFORE INSERT OR UPDATE ON executions FOR EACH ROW EXECUTE FUNCTION test_fault();
`;

interface Row {
  state: string;
  failure_code: string | null;
  refund_reason: string | null;
}

describe("relayer: faults at each step of an execution, the relayer kept running", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let proxy: RpcProxy;
  let relayer: RunningRelayer;
  let db: pg.Client;
  let agent: ListedAgent;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    proxy = await startRpcProxy(market.localnet.rpcUrl);
    relayer = await startRelayer(market.localnet, { DEVNET_RPC_URL: proxy.url, REDIS_URL: "" });
    db = new pg.Client({ connectionString: relayer.env.DATABASE_URL });
    await db.connect();
    await db.query(FAULT_TRIGGER);
    agent = await listAgent(market, relayer, { maxExecutionSecs: 10 });
    agents.push(agent);
  });
  afterEach(async () => {
    proxy?.clear();
    await db?.query("DELETE FROM test_faults");
    if (agent) {
      agent.server.behaviour = "echo";
      agent.server.delay_ms = 1_000;
    }
  });
  after(async () => {
    try {
      if (relayer) {
        // Every execution above agrees with the chain once finished.
        await expectReconciled(relayer, 30_000, true);
      }
    } finally {
      await db?.end();
      await Promise.all(agents.map((a) => a.server.close()));
      await relayer?.close();
      await proxy?.close();
      await market?.stop();
    }
  });

  const arm = (fault: string) => db.query("INSERT INTO test_faults (name) VALUES ($1)", [fault]);

  /** Resolves once the creator got the execution's request (the escrow is open by then). */
  async function creatorCalled(before: number): Promise<void> {
    for (let i = 0; i < 200 && agent.server.received.length === before; i += 1) await sleep(25);
    assert.ok(agent.server.received.length > before, "the creator was called");
  }

  function executionIdOf(response: ApiResponse): string {
    const body = response.body as { id?: string; error?: { execution_id?: string } };
    const id = body.id ?? body.error?.execution_id;
    assert.ok(id, `the answer names its execution: ${response.status} ${JSON.stringify(response.body)}`);
    return id;
  }

  /** The execution's row once final (settled, refunded or failed). */
  async function final(id: string, timeout_ms = 45_000): Promise<Row> {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const { rows } = await db.query<Row>("SELECT state, failure_code, refund_reason FROM executions WHERE id = $1", [id]);
      if (rows[0] && ["settled", "refunded", "failed"].includes(rows[0].state)) return rows[0];
      if (Date.now() > deadline) throw new Error(`execution ${id} is still ${rows[0]?.state}`);
      await sleep(100);
    }
  }

  /** open_escrow and exactly one settle or refund landed on the escrow, and it is closed. */
  async function exactlyOnce(id: string): Promise<void> {
    const escrow = escrowPda(parseExecutionId(id)!, market.programId);
    assert.equal(await market.connection.getAccountInfo(escrow, "confirmed"), null, "the escrow is closed");
    const history = await market.connection.getSignaturesForAddress(escrow, undefined, "confirmed");
    assert.equal(history.filter((entry) => entry.err === null).length, 2, "open_escrow and one settle or refund");
  }

  async function refundedWhole(id: string, payer: Payer): Promise<void> {
    const row = await final(id);
    assert.equal(row.state, "refunded");
    assert.equal(row.failure_code, "relayer_error", "the relayer's failure, not the creator's");
    assert.equal(row.refund_reason, "RelayerError");
    await exactlyOnce(id);
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS, "the payer is whole, to the unit");
  }

  /** A 202 with the execution: never "nothing was charged" once an escrow may be open. */
  function handedOver(response: ApiResponse): string {
    assert.equal(response.status, 202, JSON.stringify(response.body));
    const body = response.body as { status: string; id: string };
    assert.ok(["pending", "running"].includes(body.status), body.status);
    assert.equal(response.headers.get("location"), `/v1/executions/${body.id}`);
    return body.id;
  }

  it("RPC: open_escrow lands but its answer is lost → 202, then refunded by the finish job", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    const rule = proxy.fail("sendTransaction", "lose");
    const response = await execute(relayer, payer, agent.address);
    assert.equal(rule.hits, 1);
    const id = handedOver(response);
    await refundedWhole(id, payer);
  });

  it("RPC: the settle's send fails → 200 with the output, then settled by the finish job, charged once", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    const creatorBefore = await market.usdc(agent.creator.tokenAccount);
    const rule = proxy.fail("sendTransaction", "error", { skip: 1 });
    const response = await execute(relayer, payer, agent.address);
    assert.equal(rule.hits, 1, "the settle's send failed");
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = executionIdOf(response);
    assert.equal((await final(id)).state, "settled");
    await exactlyOnce(id);
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS - PRICE, "charged once, to the unit");
    assert.equal(await market.usdc(agent.creator.tokenAccount), creatorBefore + splitPayment(PRICE).creatorShareUsdc);
  });

  for (const fault of ["error", "stall"] as const) {
    it(`RPC: the blockhash read for the settle ${fault === "error" ? "fails" : "times out"} → 202, then refunded`, async function () {
      this.timeout(90_000);
      const payer = await newPayer(market, relayer, FUNDS);
      // Past the age up to which the sender signs with its cached blockhash (5 s), the settle
      // needs a fresh one.
      agent.server.behaviour = "slow";
      agent.server.delay_ms = 5_500;
      const before = agent.server.received.length;
      const pending = execute(relayer, payer, agent.address);
      await creatorCalled(before);
      const rule = proxy.fail("getLatestBlockhash", fault);
      const response = await pending;
      assert.equal(rule.hits, 1);
      const id = handedOver(response);
      await refundedWhole(id, payer);
    });
  }

  it("DB: the statement writing the result fails → 202, then refunded by the finish job", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    agent.server.behaviour = "slow";
    agent.server.delay_ms = 500;
    const before = agent.server.received.length;
    const pending = execute(relayer, payer, agent.address);
    await creatorCalled(before);
    await arm("settle_error");
    const id = handedOver(await pending);
    await refundedWhole(id, payer);
  });

  it("DB: the relayer's connections are terminated mid-statement → 202, then refunded; the relayer serves on", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    await arm("settle_slow");
    const pending = execute(relayer, payer, agent.address);
    let sleeping = 0;
    for (let i = 0; i < 200 && sleeping === 0; i += 1) {
      const { rows } = await db.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'",
      );
      sleeping = rows.length;
      if (sleeping === 0) await sleep(25);
    }
    assert.equal(sleeping, 1, "the result's write is under way");
    await db.query("DELETE FROM test_faults");
    const { rows: killed } = await db.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    assert.ok(killed.length >= 1);
    const id = handedOver(await pending);
    await refundedWhole(id, payer);
    const next = await execute(relayer, payer, agent.address);
    assert.equal(next.status, 200, "the relayer serves on over new connections");
    assert.equal((await final(executionIdOf(next))).state, "settled");
  });

  it("DB: the insert fails → 503 database_unavailable (not chain_unavailable), nothing charged", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    await arm("insert_error");
    const response = await execute(relayer, payer, agent.address);
    assert.equal(response.status, 503);
    assert.equal(errorCode(response), "database_unavailable");
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS);
    const { rows } = await db.query("SELECT count(*)::int AS n FROM executions WHERE wallet = $1", [payer.wallet.publicKey.toBase58()]);
    assert.equal(rows[0].n, 0);
  });

  it("the sweep takes over an execution of a live relayer that made no progress for its bound", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    agent.server.behaviour = "slow";
    agent.server.delay_ms = 6_000;
    const before = agent.server.received.length;
    const pending = execute(relayer, payer, agent.address);
    await creatorCalled(before);
    const id = agent.server.received[before]!.body.execution_id;
    // As if the run had stalled past the longest a run lasts (its relayer alive all along).
    await db.query("UPDATE executions SET updated_at = clock_timestamp() - interval '2 hours' WHERE id = $1", [id]);
    const row = await final(id, 20_000);
    assert.equal(row.state, "refunded", "taken over and refunded while the stalled run still waited");
    const response = await pending;
    assert.equal(response.status, 500, JSON.stringify(response.body));
    assert.equal(errorCode(response), "relayer_error");
    await refundedWhole(id, payer);
  });

  it("finish reads the settlement's event first: a settle that landed is never concluded refunded; reconcile flags a state it contradicts", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    const response = await execute(relayer, payer, agent.address);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = executionIdOf(response);
    assert.equal((await final(id)).state, "settled");
    // The row as if its settle had been re-signed and the new signature never landed (expired):
    // the escrow is closed, and only the EscrowSettledToLog naming its id and nonce says by what.
    const bogus = utils.bytes.bs58.encode(randomBytes(64));
    const { rows: kept } = await db.query("SELECT settle_tx FROM executions WHERE id = $1", [id]);
    await db.query(
      `UPDATE executions SET state = 'settling', confirmed_at = NULL,
         settle_tx = settle_tx || jsonb_build_object('signature', $2::text, 'last_valid_block_height', 0)
       WHERE id = $1`,
      [id, bogus],
    );
    await relayer.services.jobs.add("finish", id);
    assert.equal((await final(id)).state, "settled", "the leaf's event proves the settle");
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS - PRICE);

    await db.query("UPDATE executions SET state = 'refunded' WHERE id = $1", [id]);
    try {
      const report = await relayer.services.reconcile("devnet");
      assert.ok(
        report.differences.some(
          (d) => d.execution === id && /refunded in the database, but the receipt log shows a settle landed/.test(d.problem),
        ),
        JSON.stringify(report.differences),
      );
    } finally {
      // As it truly is again, for the reconciliation after all the cases.
      await db.query("UPDATE executions SET state = 'settled', settle_tx = $2 WHERE id = $1", [id, kept[0].settle_tx]);
    }
  });

  it("an escrow whose deadline leaves the creator no time is refunded at once as relayer_error, the creator never called", async () => {
    const short = await listAgent(market, relayer, { maxExecutionSecs: 3 });
    agents.push(short);
    const payer = await newPayer(market, relayer, FUNDS);
    const before = (await fetchMarket(market.connection, undefined, { programId: market.programId }))!;
    const setGrace = async (escrowGraceSecs: number) => {
      await market.send(
        [
          updateMarketInstruction({
            programId: market.programId,
            authority: market.keys.authority.publicKey,
            treasury: before.treasury,
            params: {
              relayer: before.relayer,
              arbiter: before.arbiter,
              minCollateralUsdc: before.minCollateralUsdc,
              minPricePerCallUsdc: before.minPricePerCallUsdc,
              escrowGraceSecs,
              disputeWindowSecs: before.disputeWindowSecs,
              collateralCooldownSecs: before.collateralCooldownSecs,
              escrowsPaused: false,
            },
            newAuthority: market.keys.authority.publicKey,
          }),
        ],
        [market.keys.authority],
      );
    };
    // No grace: the deadline is the agent's 3 s, less than the margin kept for settle.
    await setGrace(0);
    try {
      const probes = short.server.received.length;
      const response = await execute(relayer, payer, short.address);
      assert.equal(response.status, 500, JSON.stringify(response.body));
      assert.equal(errorCode(response), "relayer_error");
      assert.equal(short.server.received.length, probes, "the creator was not called");
      await refundedWhole(executionIdOf(response), payer);
    } finally {
      await setGrace(before.escrowGraceSecs);
    }
  });

  describe("subscribe", () => {
    let plan: ListedAgent;
    before(async () => {
      plan = await listAgent(market, relayer, { pricing: { kind: "Subscription", periodPriceUsdc: 300_000n, periodSecs: 3600 } });
      agents.push(plan);
    });
    const subscribe = (payer: Payer, target: ListedAgent, key?: string) =>
      api(relayer, "POST", `/v1/agents/${target.address.toBase58()}/subscription`, {
        token: payer.apiKey,
        headers: key === undefined ? {} : { "idempotency-key": key },
      });

    it("with an Idempotency-Key: a replay returns the first answer and pays once; another agent under the key is 409", async () => {
      const payer = await newPayer(market, relayer, FUNDS);
      const first = await subscribe(payer, plan, "sub-once");
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.status, "succeeded");
      const again = await subscribe(payer, plan, "sub-once");
      assert.equal(again.status, 200);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(again.body, first.body);
      assert.equal(await market.usdc(payer.tokenAccount), FUNDS - 300_000n, "one period paid");
      const other = await subscribe(payer, agent, "sub-once");
      assert.equal(other.status, 409);
      assert.equal(errorCode(other), "idempotency_key_reused");
    });

    it("its send's answer lost: 202 pending (not 'nothing charged'), then succeeded by the finish job, paid once", async () => {
      const payer = await newPayer(market, relayer, FUNDS);
      const rule = proxy.fail("sendTransaction", "lose");
      const first = await subscribe(payer, plan, "sub-lost");
      assert.equal(rule.hits, 1);
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.equal(first.body.status, "pending");
      let replay = first;
      for (let i = 0; i < 200 && replay.body.status === "pending"; i += 1) {
        await sleep(100);
        replay = await subscribe(payer, plan, "sub-lost");
      }
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.body.status, "succeeded");
      assert.equal(replay.body.id, first.body.id);
      assert.equal(replay.body.transaction, first.body.transaction);
      assert.equal(await market.usdc(payer.tokenAccount), FUNDS - 300_000n, "paid once, to the unit");
      const covered = await execute(relayer, payer, plan.address);
      assert.equal(covered.status, 200, "the subscription is active");
    });
  });
});

/** A PostgreSQL server of the test's own (initdb in a temporary folder), which it may restart. */
class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const versions = readdirSync("/usr/lib/postgresql").sort();
    const bin = join("/usr/lib/postgresql", versions[versions.length - 1]!, "bin");
    const dir = mkdtempSync(join(tmpdir(), "relayer-pg-"));
    chmodSync(dir, 0o700);
    chownSync(dir, uid("postgres"), gid("postgres"));
    const server = new PrivatePostgres(dir, await freePort(), bin);
    server.asPostgres("initdb", ["-D", join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
    server.start();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  start(): void {
    this.pgCtl("start", ["-w", "-o", `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-l", join(this.dir, "log")]);
  }

  stop(): void {
    this.pgCtl("stop", ["-w", "-m", "immediate"]);
  }

  destroy(): void {
    try {
      this.stop();
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private pgCtl(action: string, args: string[]): void {
    this.asPostgres("pg_ctl", [action, "-D", join(this.dir, "data"), ...args]);
  }

  private asPostgres(tool: string, args: string[]): void {
    execFileSync("runuser", ["-u", "postgres", "--", join(this.bin, tool), ...args], { stdio: "ignore" });
  }
}

const uid = (user: string) => Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
const gid = (user: string) => Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());

describe("relayer: its PostgreSQL server stopped and started again mid-execution", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let postgres: PrivatePostgres;
  let relayer: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    postgres = await PrivatePostgres.start();
    const database = new URL(postgres.url);
    database.pathname = "/relayer_restart";
    await ensureDatabase(database.href);
    relayer = await startRelayer(market.localnet, { DATABASE_URL: database.href, REDIS_URL: "" });
    agent = await listAgent(market, relayer, { maxExecutionSecs: 10 });
  });
  after(async () => {
    try {
      if (relayer) await expectReconciled(relayer, 30_000, true);
    } finally {
      await agent?.server.close();
      await relayer?.app.close();
      await relayer?.services.close();
      postgres?.destroy();
      await market?.stop();
    }
  });

  it("the result's write finds the server down → 202; once it is back, refunded, the payer whole, the relayer serving on", async () => {
    const payer = await newPayer(market, relayer, FUNDS);
    agent.server.behaviour = "slow";
    agent.server.delay_ms = 2_000;
    const before = agent.server.received.length;
    const pending = execute(relayer, payer, agent.address);
    for (let i = 0; i < 200 && agent.server.received.length === before; i += 1) await sleep(25);
    const id = agent.server.received[before]!.body.execution_id;
    postgres.stop();
    const response = await pending;
    assert.equal(response.status, 202, JSON.stringify(response.body));
    assert.equal((response.body as { id: string }).id, id);
    // Down a few seconds more: the handover to the finish job is retried meanwhile.
    await sleep(3_000);
    postgres.start();
    const db = new pg.Client({ connectionString: relayer.env.DATABASE_URL });
    await db.connect();
    try {
      let row: Row | undefined;
      for (let i = 0; i < 300; i += 1) {
        row = (await db.query<Row>("SELECT state, failure_code, refund_reason FROM executions WHERE id = $1", [id])).rows[0];
        if (row && ["settled", "refunded"].includes(row.state)) break;
        await sleep(100);
      }
      assert.equal(row?.state, "refunded");
      assert.equal(row?.failure_code, "relayer_error");
    } finally {
      await db.end();
    }
    assert.equal(await market.usdc(payer.tokenAccount), FUNDS, "the payer is whole, to the unit");
    const escrow = escrowPda(parseExecutionId(id)!, market.programId);
    const history = await market.connection.getSignaturesForAddress(escrow, undefined, "confirmed");
    assert.equal(history.filter((entry) => entry.err === null).length, 2, "open_escrow and one refund");
    agent.server.behaviour = "echo";
    const next = await execute(relayer, payer, agent.address);
    assert.equal(next.status, 200, JSON.stringify(next.body));
  });
});
