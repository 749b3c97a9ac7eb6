// An agent an upheld dispute slashed below the market's minimum, in a real browser against a real
// relayer, indexer and localnet: its page follows the collateral live (no stale listing figure),
// its creator is told how much is missing with a one-click top-up there and on My agents, and
// Resume, refused for want of collateral, says so in words and tops up and resumes in one click.
import { strict as assert } from "node:assert";

import {
  disputePda,
  disputeRoute,
  evidenceHash,
  fetchDispute,
  fetchLoggedReceipt,
  fromHex,
  openDisputeFor,
  parseExecutionId,
  resolveDisputeInstruction,
  toHex,
  type DisputeRoute,
} from "@agent-market/program";

import { execute, listAgent, newPayer, type ListedAgent } from "@agent-market/tests/marketplace";
import { api, signIn } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreenAt } from "./page-checks.js";
import { waitFor } from "./stack.js";
import { dashboardSuite } from "./suite.js";

describe("an agent slashed below the minimum collateral", function () {
  this.timeout(300_000);
  // The refused resume is a 422 the browser logs; the screen's words about it are what is checked.
  const suite = dashboardSuite({ expectedError: (error) => error.includes("status of 422") });
  let agent: ListedAgent;

  before(async () => {
    agent = await listAgent(suite.stack.market, suite.stack.relayer);
    suite.defer(() => agent.server.close());
  });

  it("shows the slash live on the agent's page, says how much to top up, and resumes once topped up in one click", async () => {
    const { stack } = suite;
    const { market, relayer } = stack;
    const address = agent.address.toBase58();
    const creator = agent.creator;
    // Registration locked all the creator's USDC: a little more for the top-up.
    await market.localnet.mintUsdc(creator.wallet.publicKey, 1_000_000n);

    const payer = await newPayer(market, relayer, 10_000_000n);
    const ran = await execute(relayer, payer, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    const id = (ran.body as { id: string }).id;
    let evidence = await api<{ evidence_hash: string }>(relayer, "POST", "/v1/disputes/evidence", { token: payer.token, body: { execution_id: id, statement: "Wrong language." } });
    await waitFor("the relayer to record the settlement", async () => {
      if (evidence.status === 201) return true;
      evidence = await api(relayer, "POST", "/v1/disputes/evidence", { token: payer.token, body: { execution_id: id, statement: "Wrong language." } });
      return false;
    });
    assert.equal(evidence.body.evidence_hash, toHex(evidenceHash("Wrong language.", [])));
    let route: DisputeRoute | null = null;
    await waitFor("the execution's leaf in the indexer", async () => {
      route = await disputeRoute(market.connection, parseExecutionId(id)!, {
        programId: market.programId,
        source: { kind: "indexer", loggedReceipt: () => fetchLoggedReceipt(stack.graphqlUrl, id) },
      });
      return route !== null;
    });
    await market.send(
      [openDisputeFor(route!, { programId: market.programId, payer: payer.wallet.publicKey, evidenceHash: fromHex(evidence.body.evidence_hash) })],
      [payer.wallet],
    );
    // The creator paused it meanwhile: resuming runs the checklist, collateral included.
    const token = await signIn(relayer, creator.wallet);
    assert.equal((await api(relayer, "POST", `/v1/agents/${address}/pause`, { token })).status, 200);

    const dashboard = await suite.open(creator.wallet);
    await signInWithTestWallet(dashboard);
    const { page } = dashboard;
    await page.goto(`/#/agents/${address}`);
    const collateral = page.getByTestId("agent-collateral");
    await collateral.filter({ hasText: /^100\.00 USDC$/ }).waitFor();
    assert.equal(await page.getByTestId("collateral-short").count(), 0, "nothing is missing yet");

    const open = (await fetchDispute(market.connection, disputePda(agent.address, route!.leafIndex, market.programId), { programId: market.programId }))!;
    await market.send(
      [
        resolveDisputeInstruction({
          programId: market.programId,
          arbiter: market.arbiter.publicKey,
          usdcMint: market.usdcMint,
          agent: agent.address,
          leafIndex: open.leafIndex,
          payerTokenAccount: open.payerTokenAccount,
          upheld: true,
          slashUsdc: 500_000n,
        }),
      ],
      [market.arbiter],
    );
    // The open page follows the slash without a reload, as the relayer's listing does.
    await collateral.filter({ hasText: /^99\.50 USDC$/ }).waitFor({ timeout: 15_000 });
    await waitFor("the relayer's listing to show the slash", async () => (await api<{ collateral_usdc: string }>(relayer, "GET", `/v1/agents/${address}`)).body.collateral_usdc === "99.500000");
    const short = page.getByTestId("collateral-short");
    await short.waitFor();
    assert.match((await short.textContent())!, /Echo locks 99\.50 USDC, 0\.50 USDC less than the market's minimum of 100\.00 USDC/);
    await short.getByRole("button", { name: "Sign and top up 0.50 USDC" }).waitFor();
    await checkScreenAt(page, "agent-page-slashed");

    await page.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: address });
    await card.getByTestId("collateral-usdc").filter({ hasText: /^99\.50 USDC$/ }).waitFor();
    await card.getByTestId("collateral-short").getByRole("button", { name: "Sign and top up 0.50 USDC" }).waitFor();
    await card.getByRole("button", { name: "Resume Echo" }).click();
    // The refusal in words, with the fix beside it: no error code to decipher.
    const refusal = card.getByTestId("collateral-short").filter({ hasText: "cannot resume yet" });
    await refusal.waitFor();
    assert.match((await refusal.textContent())!, /Echo cannot resume yet: it locks 99\.50 USDC, less than the market's minimum of 100\.00 USDC/);
    await checkScreenAt(page, "my-agents-slashed");
    await refusal.getByRole("button", { name: "Sign: top up 0.50 USDC and resume" }).click();
    await card.getByTestId("listing-status").filter({ hasText: "listing active" }).waitFor({ timeout: 60_000 });
    await card.getByTestId("collateral-usdc").filter({ hasText: /^100\.00 USDC$/ }).waitFor();
    assert.equal(await card.getByTestId("collateral-short").count(), 0, "nothing is missing any more");
    assert.equal((await api<{ status: string }>(relayer, "GET", `/v1/agents/${address}`)).body.status, "active");
  });
});
