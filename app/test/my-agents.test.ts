// The creator's side of the dashboard, in a real browser against a real relayer, indexer and
// localnet: all of a creator's agents kept current as they execute; its agent's record and listing, pause and resume, a collateral top-up, retirement, and
// a withdrawal refused while a dispute is open, counted down through the cooldown, then made.
import { strict as assert } from "node:assert";

import {
  collateralVaultPda,
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
import { PublicKey } from "@solana/web3.js";

import { COLLATERAL_COOLDOWN_SECS, MIN_COLLATERAL_USDC } from "@agent-market/tests/fixtures";
import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator } from "@agent-market/tests/creator-server";
import { execute, listAgent, newPayer, pricingWire, registerOnChain, type ListedAgent } from "@agent-market/tests/marketplace";
import { api, signIn } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreen } from "./page-checks.js";
import { waitFor } from "./stack.js";
import { dashboardSuite } from "./suite.js";

describe("my agents in the dashboard", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();
  let agent: ListedAgent;

  before(async () => {
    agent = await listAgent(suite.stack.market, suite.stack.relayer);
    suite.defer(() => agent.server.close());
  });

  it("follows all of a creator's agents live: an execution made through the API on its fourth appears without navigating", async () => {
    const { market, relayer, graphqlUrl } = suite.stack;
    const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    suite.defer(() => server.close());
    const listing = { name: "Fourth", description: "Echoes the task and counts its words.", tags: ["test"], input_schema: ECHO_INPUT_SCHEMA, output_schema: ECHO_OUTPUT_SCHEMA };
    const pricing = { kind: "PayPerUse", priceUsdc: 250_000n } as const;
    const terms = { signing: server.signing, endpoint: server.url, listing, pricing, maxExecutionSecs: 3 };
    const first = await registerOnChain(market, terms);
    const creator = first.creator;
    for (let i = 0; i < 3; i++) await registerOnChain(market, { ...terms, creator });
    // The agent the screen lists last (by address, as the indexer orders them): past the first
    // three, which were all a screen followed when each agent took a stream of its own.
    let order: string[] = [];
    await waitFor("the creator's four agents indexed", async () => {
      const response = await fetch(graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `query($c: String!) { creator(address: $c) { agents { address } } }`, variables: { c: creator.wallet.publicKey.toBase58() } }),
      });
      order = ((await response.json()) as { data: { creator: { agents: { address: string }[] } } }).data.creator.agents.map((a) => a.address);
      return order.length === 4;
    });
    const last = order[3]!;
    const token = await signIn(relayer, creator.wallet);
    for (const agent of order) {
      const listed = await api(relayer, "POST", "/v1/agents", {
        token,
        body: { agent, ...listing, endpoint: server.url, signing_key: server.signing.publicKey.toBase58(), pricing: pricingWire(pricing) },
      });
      assert.equal(listed.status, 201, JSON.stringify(listed.body));
    }

    const dashboard = await suite.open(creator.wallet);
    await signInWithTestWallet(dashboard);
    const { page } = dashboard;
    await page.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: last });
    await card.getByTestId("listing-status").waitFor();
    assert.equal(await page.getByTestId("my-agent").count(), 4);
    const executions24h = card.getByTestId("agent-windows").locator("tbody tr").first().locator("td").first();
    assert.equal(await executions24h.textContent(), "0");
    // Success and latency with nothing to measure carry the same mark.
    assert.deepEqual(await card.getByTestId("agent-windows").locator("tbody tr").first().locator("td").allTextContents(), ["0", "—", "—", "—"]);
    assert.equal(await page.getByTestId("earnings").textContent(), "0.00 USDC");

    const payer = await newPayer(market, relayer, 10_000_000n);
    const ran = await execute(relayer, payer, new PublicKey(last));
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    // The indexer records it at `confirmed`; the open screen follows within a few seconds, untouched.
    await executions24h.filter({ hasText: /^1$/ }).waitFor({ timeout: 8_000 });
    await page.getByTestId("earnings").filter({ hasText: /^0\.2475 USDC$/ }).waitFor({ timeout: 8_000 });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="collateral-usdc"]').length === 4);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "my-agents-live");
    }
  });

  it("shows the agent's record; pauses, resumes, tops up, retires; refuses to withdraw while a dispute is open, counts the cooldown down, then withdraws", async () => {
    const { stack } = suite;
    const { market, relayer } = stack;
    const creator = agent.creator;
    await market.localnet.mintUsdc(creator.wallet.publicKey, 5_000_000n);
    const payer = await newPayer(market, relayer, 10_000_000n);
    const ran = await execute(relayer, payer, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    const id = (ran.body as { id: string }).id;
    const executionId = parseExecutionId(id)!;

    // The payer disputes it (the Executions screen's path is covered by disputes.test.ts).
    // The relayer answers before it records the settlement: it takes evidence once it has.
    let evidence = await api<{ evidence_hash: string }>(relayer, "POST", "/v1/disputes/evidence", { token: payer.token, body: { execution_id: id, statement: "Wrong language." } });
    await waitFor("the relayer to record the settlement", async () => {
      if (evidence.status === 201) return true;
      assert.equal((evidence.body as unknown as { error: { code: string } }).error.code, "execution_not_disputable");
      evidence = await api(relayer, "POST", "/v1/disputes/evidence", { token: payer.token, body: { execution_id: id, statement: "Wrong language." } });
      return false;
    });
    assert.equal(evidence.body.evidence_hash, toHex(evidenceHash("Wrong language.", [])));
    // Settled into the agent's receipt log: its leaf and proof come from the indexer once it has it.
    let route: DisputeRoute | null = null;
    await waitFor("the execution's leaf in the indexer", async () => {
      route = await disputeRoute(market.connection, executionId, {
        programId: market.programId,
        source: { kind: "indexer", loggedReceipt: () => fetchLoggedReceipt(stack.graphqlUrl, id) },
      });
      return route !== null;
    });
    await market.send(
      [openDisputeFor(route!, { programId: market.programId, payer: payer.wallet.publicKey, evidenceHash: fromHex(evidence.body.evidence_hash) })],
      [payer.wallet],
    );

    const address = agent.address.toBase58();
    await waitFor("the settled execution in the indexer", async () => {
      const response = await fetch(stack.graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `query($a: String!) { agent(address: $a) { stats(window: H24) { settled } } }`, variables: { a: address } }),
      });
      return ((await response.json()) as { data: { agent: { stats: { settled: number } } | null } }).data.agent?.stats.settled === 1;
    });

    const dashboard = await suite.open(creator.wallet);
    await signInWithTestWallet(dashboard);
    const { page } = dashboard;
    await page.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: address });
    await card.getByRole("heading", { name: /^Echo/ }).waitFor();
    assert.equal(await card.getByTestId("listing-status").textContent(), "listing active");
    const day = await card.getByTestId("agent-windows").locator("tbody tr").first().locator("td").allTextContents();
    assert.deepEqual(day.slice(0, 2), ["1", "100.0%"], "24 h: one execution, settled");
    assert.match((await card.getByTestId("refunds").textContent())!, /Refunds over 30 days: none/);
    await card.getByTestId("uptime-chart").waitFor();
    const bars = await card.getByTestId("chart-earnings").locator("rect title").allTextContents();
    assert.equal(bars.filter((t) => t.endsWith(": 0.2475 USDC from 1 settled")).length, 1, bars.join("\n"));
    assert.equal(await card.getByTestId("open-disputes").textContent(), "1 see them");
    assert.equal(await card.getByTestId("collateral-usdc").textContent(), "100.00 USDC");
    assert.equal(await card.getByTestId("collateral-usdc").getAttribute("title"), "100.000000 USDC");
    assert.equal(await page.getByTestId("earnings").textContent(), "0.2475 USDC");
    assert.equal(await page.getByTestId("earnings").getAttribute("title"), "0.247500 USDC");
    await checkScreen(page, "my-agents");

    await card.getByRole("button", { name: "Pause Echo" }).click();
    await card.getByTestId("listing-status").filter({ hasText: "listing paused" }).waitFor();
    assert.equal((await api<{ status: string }>(relayer, "GET", `/v1/agents/${address}`)).body.status, "paused");
    await card.getByRole("button", { name: "Resume Echo" }).click();
    await card.getByTestId("listing-status").filter({ hasText: "listing active" }).waitFor();

    const vault = collateralVaultPda(agent.address, market.programId);
    await card.getByLabel("Top up, USDC").fill("two");
    await card.getByRole("button", { name: "Sign and top up" }).click();
    assert.equal(await card.getByRole("alert").textContent(), "Give an amount in USDC, e.g. 10 (up to 6 decimals).");
    await card.getByLabel("Top up, USDC").fill("2");
    await card.getByRole("button", { name: "Sign and top up" }).click();
    await card.getByTestId("collateral-usdc").filter({ hasText: "102.00 USDC" }).waitFor({ timeout: 60_000 });
    assert.equal(await market.usdc(vault), MIN_COLLATERAL_USDC + 2_000_000n);

    // Asked first, with focus on keeping it; Escape keeps it.
    await card.getByRole("button", { name: "Retire Echo" }).click();
    await card.getByRole("group", { name: "Confirm retirement" }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Keep it");
    await page.keyboard.press("Escape");
    assert.equal(await card.getByRole("group", { name: "Confirm retirement" }).count(), 0);
    await card.getByRole("button", { name: "Retire Echo" }).click();
    await card.getByRole("group", { name: "Confirm retirement" }).getByText("starts a cooldown of 7 days before").waitFor();
    await card.getByRole("button", { name: "Sign: retire “Echo” for good" }).click();
    // A retired agent is not "operational", whatever its record says.
    await card.getByText("retired", { exact: true }).first().waitFor({ timeout: 60_000 });
    await card.getByTestId("collateral-done").filter({ hasText: "Retired" }).waitFor({ timeout: 60_000 });
    await card.getByTestId("listing-status").filter({ hasText: "listing retired" }).waitFor();
    const withdraw = card.getByRole("button", { name: "Sign and withdraw" });
    await card.getByTestId("withdraw-lock").filter({ hasText: "Locked: 1 open dispute on this agent. The collateral stays until the arbiter resolves it." }).waitFor();
    assert.equal(await withdraw.isDisabled(), true, "refused while the dispute is open");
    await checkScreen(page, "my-agents-retired");

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
          upheld: false,
          slashUsdc: 0n,
        }),
      ],
      [market.arbiter],
    );
    await card.getByRole("button", { name: "Refresh" }).click();
    await card.getByTestId("withdraw-lock").filter({ hasText: "Cooling down after retirement:" }).waitFor();
    assert.match((await card.getByTestId("countdown").textContent())!, /^(7d 0h 0m 0s|6d 23h 5\dm \d+s) left \(until /, "the 7-day cooldown, just begun");
    assert.equal(await withdraw.isDisabled(), true, "refused during the cooldown");

    await market.localnet.advanceClock({ seconds: COLLATERAL_COOLDOWN_SECS });
    await card.getByRole("button", { name: "Refresh" }).click();
    await card.getByTestId("withdraw-lock").filter({ hasText: "Unlocked: the collateral can be withdrawn." }).waitFor();
    const before = await market.usdc(creator.tokenAccount);
    await withdraw.click();
    await card.getByTestId("collateral-done").filter({ hasText: "Withdrew 102.00 USDC of collateral" }).waitFor({ timeout: 60_000 });
    assert.equal(await market.usdc(creator.tokenAccount), before + MIN_COLLATERAL_USDC + 2_000_000n);
    assert.equal(await market.usdc(vault), 0n);
    // The totals follow once the indexer has the withdrawal, without reloading the page.
    await page.getByTestId("collateral-held").filter({ hasText: /^0\.00 USDC$/ }).waitFor({ timeout: 15_000 });

    await page.setViewportSize({ width: 375, height: 900 });
    await checkScreen(page, "my-agents");
  });
});
