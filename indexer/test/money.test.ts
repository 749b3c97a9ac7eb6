// Money views: disputes (open, upheld, rejected) and slashes, collateral after a slash,
// subscriptions with their fee shard, creators' earnings.
import { strict as assert } from "node:assert";

import { disputeRoute, openDisputeFor, resolveDisputeInstruction } from "@agent-market/program";

import { USDC, type AgentFixture, type OpenedEscrow, type Wallet } from "@agent-market/tests/fixtures";
import { backfill } from "../src/ingest/backfill.js";
import { quietIndexer, query, startEnv, stopEnv, type IndexerEnv } from "./support.js";

describe("money", function () {
  this.timeout(120_000);
  let env: IndexerEnv | undefined;

  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  it("counts disputes and slashes, lowers collateral, and adds subscriptions to fees and earnings", async () => {
    const t = env!.market;
    const agent = await t.agent();
    const payer = await t.payer(50n * USDC);
    const settled: OpenedEscrow[] = [];
    for (let i = 0; i < 3; i++) {
      const escrow = await t.openEscrow(agent, payer);
      await t.settle(escrow, agent);
      settled.push(escrow);
    }
    // Each settlement's leaf and proof from the chain's history of the receipt log; the dispute
    // is keyed by its leaf index.
    const leafIndexes = new Map<OpenedEscrow, bigint>();
    const dispute = async (escrow: OpenedEscrow) => {
      const route = (await disputeRoute(t.connection, escrow.executionId, { programId: t.programId, source: { kind: "chain", agent: agent.address } }))!;
      leafIndexes.set(escrow, route.leafIndex);
      return t.send([openDisputeFor(route, { payer: payer.wallet.publicKey, evidenceHash: new Uint8Array(32).fill(4), programId: t.programId })], [payer.wallet]);
    };
    const resolve = (a: AgentFixture, p: Wallet, escrow: OpenedEscrow, upheld: boolean, slashUsdc: bigint) =>
      t.send(
        [resolveDisputeInstruction({ programId: t.programId, arbiter: t.arbiter.publicKey, usdcMint: t.usdcMint, agent: a.address, leafIndex: leafIndexes.get(escrow)!, payerTokenAccount: p.tokenAccount, upheld, slashUsdc })],
        [t.arbiter],
      );
    for (const escrow of settled) await dispute(escrow);
    await resolve(agent, payer, settled[0]!, true, 30n * USDC);
    await resolve(agent, payer, settled[1]!, false, 0n);

    const subscribed = await t.agent({ kind: "Subscription", periodPriceUsdc: 10n * USDC, periodSecs: 30 * 24 * 3600 });
    const subscriber = await t.payer(25n * USDC);
    await t.sendAsRelayer([t.subscribeInstruction(subscribed, subscriber, 3)]);

    const indexer = await quietIndexer(env!);
    try {
      await backfill(indexer.rpc, indexer.store);
      const data = await query(
        indexer,
        `query($agent: String!, $creator: String!, $subscribedCreator: String!) {
          market { disputes { open upheld rejected } slashed { usdc } subscriptions { count amount { usdc } } feeShards { index fees { usdc } } }
          agent(address: $agent) { collateral { usdc } }
          disputes(first: 10) { nodes { id dispute { state slashed { usdc } } } }
          open: disputes(state: OPEN) { nodes { id } }
          creator(address: $creator) { earnings { usdc } }
          subscribedCreator: creator(address: $subscribedCreator) { earnings { usdc } subscriptionEarnings { usdc } }
          subscriptions(first: 5) { nodes { agent payer amount { usdc } fee { usdc } includedCalls transaction { signature } } }
        }`,
        { agent: agent.address.toBase58(), creator: agent.creator.wallet.publicKey.toBase58(), subscribedCreator: subscribed.creator.wallet.publicKey.toBase58() },
      );
      assert.deepEqual(data.market.disputes, { open: 1, upheld: 1, rejected: 1 });
      assert.equal(data.market.slashed.usdc, "30.000000");
      assert.equal(data.agent.collateral.usdc, "70.000000", "100 USDC locked, 30 slashed");
      assert.equal(data.disputes.nodes.length, 3);
      assert.deepEqual(
        data.disputes.nodes.map((n: any) => n.dispute.state).sort(),
        ["OPEN", "REJECTED", "UPHELD"],
      );
      assert.equal(data.open.nodes.length, 1);
      assert.equal(data.creator.earnings.usdc, "0.742500", "3 × 0.2475");
      assert.deepEqual(data.market.subscriptions, { count: 1, amount: { usdc: "10.000000" } });
      assert.equal(data.subscribedCreator.subscriptionEarnings.usdc, "9.900000");
      assert.equal(data.subscribedCreator.earnings.usdc, "9.900000");
      assert.equal(data.market.feeShards.find((s: any) => s.index === 3).fees.usdc, "0.100000");
      assert.equal(data.subscriptions.nodes[0].payer, subscriber.wallet.publicKey.toBase58());
    } finally {
      await indexer.close();
    }
  });
});
