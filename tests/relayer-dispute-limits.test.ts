// What a party can make the relayer store or read about disputes: evidence per execution and
// within the dispute window only, and lists of disputes that read the caller's own and nothing
// that grows with other wallets' disputes (the RPC calls are observed through a proxy).
import { strict as assert } from "node:assert";

import { disputeRoute, openDisputeFor, parseExecutionId } from "@agent-market/program";

import { DISPUTE_WINDOW_SECS, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "./src/marketplace.js";
import { api, errorCode, ONE_BY_ONE, relayerEnv, signIn, startRelayerWith, type RunningRelayer } from "./src/relayer.js";
import { startRpcProxy, type RpcProxy } from "./src/rpc-proxy.js";

interface Evidence {
  evidence_hash: string;
}

describe("relayer: dispute limits and bounded dispute lists", function () {
  this.timeout(180_000);
  let market: TestMarket;
  let proxy: RpcProxy;
  let relayer: RunningRelayer;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    proxy = await startRpcProxy(market.localnet.rpcUrl);
    relayer = await startRelayerWith(await relayerEnv(market.localnet, { ...ONE_BY_ONE, DEVNET_RPC_URL: proxy.url }));
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.server.close()));
    try {
      await relayer?.close();
      await proxy?.close();
    } finally {
      await market?.stop();
    }
  });

  async function newAgent(): Promise<ListedAgent> {
    const listed = await listAgent(market, relayer);
    agents.push(listed);
    return listed;
  }

  async function executed(payer: Payer, by: ListedAgent): Promise<string> {
    const response = await execute(relayer, payer, by.address);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.id as string;
    for (const deadline = Date.now() + 20_000; ; ) {
      const { rows } = await relayer.services.db.query<{ state: string }>("SELECT state FROM executions WHERE id = $1", [id]);
      if (rows[0]!.state === "settled") return id;
      assert.ok(Date.now() < deadline, `${id} not settled`);
      await sleep(100);
    }
  }

  const submit = (token: string, execution_id: string, statement = "it answered nothing") =>
    api<Evidence>(relayer, "POST", "/v1/disputes/evidence", { token, body: { execution_id, statement } });

  async function openDispute(payer: Payer, agent: ListedAgent, id: string): Promise<void> {
    const created = await submit(payer.token, id);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // The settlement's leaf and proof, from the chain's history of the agent's receipt log.
    const route = await disputeRoute(market.connection, parseExecutionId(id)!, { programId: market.programId, source: { kind: "chain", agent: agent.address } });
    assert.ok(route, `${id} has a leaf`);
    await market.send(
      [openDisputeFor(route, { payer: payer.wallet.publicKey, evidenceHash: Buffer.from(created.body.evidence_hash, "hex"), programId: market.programId })],
      [payer.wallet],
    );
  }

  const evidenceCount = async (id: string, role: string) =>
    (
      await relayer.services.db.query<{ n: number }>("SELECT count(*)::int AS n FROM dispute_evidence WHERE execution_id = $1 AND role = $2", [
        id,
        role,
      ])
    ).rows[0]!.n;

  it("takes at most 10 evidence items per party on one execution: the 11th is 409 evidence_limit_reached and stores nothing", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 1_000_000n);
    const id = await executed(payer, agent);
    for (let i = 0; i < 10; i += 1) assert.equal((await submit(payer.token, id, `statement ${i}`)).status, 201);
    const over = await submit(payer.token, id, "one more");
    assert.equal(over.status, 409, JSON.stringify(over.body));
    assert.equal(errorCode(over as never), "evidence_limit_reached");
    assert.equal(await evidenceCount(id, "payer"), 10);
    // The creator's own count is apart.
    const creatorToken = await signIn(relayer, agent.creator.wallet);
    assert.equal((await submit(creatorToken, id, "the answer")).status, 201);
  });

  it("reads only the caller's disputes: other wallets' disputes add no account to a creator's or a payer's list; pages with starting_after", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 5_000_000n);
    const creatorToken = await signIn(relayer, agent.creator.wallet);
    const id = await executed(payer, agent);
    await openDispute(payer, agent, id);

    const list = async (token: string, query: string) => {
      proxy.clear();
      const response = await api<{ data: { execution_id: string }[]; has_more: boolean }>(relayer, "GET", `/v1/disputes?${query}`, { token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      // Background jobs share the proxy: the sweep's watch of every open dispute filters by the
      // account kind alone; the lists filter by a field of the caller's too.
      const reads = proxy.calls.filter((call) => call.method === "getProgramAccounts" && call.filters! > 1).map((call) => call.accounts);
      return { ids: response.body.data.map((d) => d.execution_id), has_more: response.body.has_more, reads };
    };
    const creatorBefore = await list(creatorToken, "role=creator");
    assert.deepEqual(creatorBefore.ids, [id]);
    assert.deepEqual(creatorBefore.reads, [1, 1], "its one agent, then that agent's one open dispute");
    const payerBefore = await list(payer.token, "role=payer");
    assert.deepEqual(payerBefore.ids, [id]);
    assert.deepEqual(payerBefore.reads, [1], "the payer's one open dispute");

    // Other wallets: another creator's agent, another payer, three open disputes.
    const otherAgent = await newAgent();
    const otherPayer = await newPayer(market, relayer, 5_000_000n);
    const others: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const other = await executed(otherPayer, otherAgent);
      await openDispute(otherPayer, otherAgent, other);
      others.push(other);
    }
    assert.deepEqual(await list(creatorToken, "role=creator"), creatorBefore, "the creator's list reads what it read before");
    assert.deepEqual(await list(payer.token, "role=payer"), payerBefore, "so does the payer's");

    // Newest first, a page at a time.
    const first = await list(otherPayer.token, "role=payer&limit=2");
    assert.deepEqual(first.ids, [others[2], others[1]]);
    assert.equal(first.has_more, true);
    const next = await list(otherPayer.token, `role=payer&limit=2&starting_after=${others[1]}`);
    assert.deepEqual(next.ids, [others[0]]);
    assert.equal(next.has_more, false);
    const bad = await api(relayer, "GET", "/v1/disputes?role=payer&starting_after=exec_1111111111111111111111", { token: payer.token });
    assert.equal(bad.status, 400);
    assert.equal(errorCode(bad), "invalid_cursor");
  });

  it("takes evidence only within the on-chain dispute window, or while a dispute is open: 409 dispute_window_closed, nothing stored", async () => {
    const agent = await newAgent();
    const payer = await newPayer(market, relayer, 1_000_000n);
    const creatorToken = await signIn(relayer, agent.creator.wallet);
    const quiet = await executed(payer, agent);
    const disputed = await executed(payer, agent);
    await openDispute(payer, agent, disputed);
    await market.localnet.advanceClock({ seconds: DISPUTE_WINDOW_SECS + 1 });

    for (const token of [payer.token, creatorToken]) {
      const late = await submit(token, quiet);
      assert.equal(late.status, 409, JSON.stringify(late.body));
      assert.equal(errorCode(late as never), "dispute_window_closed");
    }
    assert.equal(await evidenceCount(quiet, "payer"), 0);
    assert.equal(await evidenceCount(quiet, "creator"), 0);
    // The open dispute is still being argued: both parties may add to it.
    assert.equal((await submit(creatorToken, disputed, "the creator's answer")).status, 201);
    assert.equal((await submit(payer.token, disputed, "the payer's reply")).status, 201);
  });
});
