// A listed agent that an upheld dispute slashed below the market's minimum collateral: the program
// refuses to open an escrow with it, so the relayer refuses the call before sending anything, in
// words, with nothing charged and no fee of the relayer's spent, however often it is called; and
// takes calls again once the creator tops the collateral up.
import { strict as assert } from "node:assert";

import {
  disputePda,
  disputeRoute,
  evidenceHash,
  fetchDispute,
  openDisputeFor,
  parseExecutionId,
  resolveDisputeInstruction,
  topUpCollateralInstruction,
  type DisputeRoute,
} from "@agent-market/program";

import { TestMarket } from "./src/fixtures.js";
import { devKeys } from "./src/localnet.js";
import { execute, listAgent, newPayer, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, startRelayer, type RunningRelayer } from "./src/relayer.js";

const SLASH_USDC = 500_000n;

describe("relayer: a listed agent slashed below the minimum collateral", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer);
  });
  after(async () => {
    await agent?.server.close();
    await relayer?.close();
    await market?.stop();
  });

  it("is refused before anything is sent (409 agent_unavailable, naming both amounts), and called again once topped up", async () => {
    const payer = await newPayer(market, relayer, 10_000_000n);
    const ran = await execute(relayer, payer, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    const executionId = parseExecutionId((ran.body as { id: string }).id)!;
    let route: DisputeRoute | null = null;
    const deadline = Date.now() + 30_000;
    while (route === null && Date.now() < deadline) {
      route = await disputeRoute(market.connection, executionId, { programId: market.programId, source: { kind: "chain", agent: agent.address } });
      if (route === null) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(route, "the settlement's leaf on chain");
    await market.send(
      [openDisputeFor(route, { programId: market.programId, payer: payer.wallet.publicKey, evidenceHash: evidenceHash("Wrong.", []) })],
      [payer.wallet],
    );
    const dispute = (await fetchDispute(market.connection, disputePda(agent.address, route.leafIndex, market.programId), { programId: market.programId }))!;
    await market.send(
      [
        resolveDisputeInstruction({
          programId: market.programId,
          arbiter: market.arbiter.publicKey,
          usdcMint: market.usdcMint,
          agent: agent.address,
          leafIndex: dispute.leafIndex,
          payerTokenAccount: dispute.payerTokenAccount,
          upheld: true,
          slashUsdc: SLASH_USDC,
        }),
      ],
      [market.arbiter],
    );

    const relayerKey = devKeys().relayer.publicKey;
    const [usdcBefore, solBefore] = [await market.usdc(payer.tokenAccount), await market.connection.getBalance(relayerKey, "confirmed")];
    for (let i = 0; i < 5; i += 1) {
      const refused = await execute(relayer, payer, agent.address);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(errorCode(refused), "agent_unavailable");
      assert.equal(
        (refused.body as { error: { message: string } }).error.message,
        `Agent ${agent.address.toBase58()} locks 99.500000 USDC of collateral, less than the market's minimum of 100.000000 USDC: it takes no calls until its creator tops it up.`,
      );
    }
    assert.equal(await market.usdc(payer.tokenAccount), usdcBefore, "nothing charged");
    assert.equal(await market.connection.getBalance(relayerKey, "confirmed"), solBefore, "no transaction sent, no fee paid");
    const listed = await api<{ status: string; collateral_usdc: string }>(relayer, "GET", `/v1/agents/${agent.address.toBase58()}`);
    assert.deepEqual([listed.body.status, listed.body.collateral_usdc], ["active", "99.500000"]);

    await market.localnet.mintUsdc(agent.creator.wallet.publicKey, SLASH_USDC);
    await market.send(
      [
        topUpCollateralInstruction({
          programId: market.programId,
          creator: agent.creator.wallet.publicKey,
          agent: agent.address,
          creatorTokenAccount: agent.creator.tokenAccount,
          usdcMint: market.usdcMint,
          amountUsdc: SLASH_USDC,
        }),
      ],
      [agent.creator.wallet],
    );
    // The relayer reads the agent afresh for every quote.
    const again = await execute(relayer, payer, agent.address);
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });
});
