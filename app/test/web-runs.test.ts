// What bounds a run from the dashboard, in a real browser against a real relayer and localnet: the
// run form's maximum price (a price raised on chain is refused, never charged), the agent page's
// listing state and circuit breaker, the Wallet screen's web-run cap and revocation, and a metered
// run, which holds the most it may cost and is charged for the units it used; a parameter's fault,
// the form's or the relayer's, said beside its field.
import { strict as assert } from "node:assert";

import { listAgent, repriceOnChain, type ListedAgent } from "@agent-market/tests/marketplace";
import { api, signIn } from "@agent-market/tests/relayer";
import { signInWithTestWallet, type DashboardPage } from "./browser.js";
import { checkScreenAt, SHOTS } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

describe("the limits of web runs in the dashboard", function () {
  this.timeout(300_000);
  // Chromium logs every 4xx answer as a console error; the refusals are the behaviour under test.
  const suite = dashboardSuite({ expectedError: (error) => /the server responded with a status of (400|402|403|409)/.test(error) });
  let agent: ListedAgent;

  before(async () => {
    agent = await listAgent(suite.stack.market, suite.stack.relayer);
    suite.defer(() => agent.server.close());
  });

  async function run(page: DashboardPage["page"], task: string): Promise<void> {
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill(task);
    await page.getByLabel("language *").selectOption("en");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
  }

  it("sets the web-run cap on the Wallet screen; a run past it is refused with nothing charged; revoked web runs are refused at once", async () => {
    const { market } = suite.stack;
    const payer = await market.payer(5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByTestId("web-runs-state").filter({ hasText: "Allowed: 0.00 of 10.00 USDC spent in 0 runs." }).waitFor();
    // The field's hint is the cap in force, to the cent, not a six-place value that reads as typed.
    assert.equal(await page.getByLabel("Cap, USDC").getAttribute("placeholder"), "now 10.00");
    await page.getByLabel("Cap, USDC").fill("0.3");
    await page.getByRole("button", { name: "Set the cap" }).click();
    await page.getByTestId("web-runs-state").filter({ hasText: "of 0.30 USDC" }).waitFor();

    await run(page, "first run");
    await page.getByTestId("run-output").waitFor();
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n - 250_000n);
    await run(page, "second run");
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent())!, /spending_cap_reached/);
    assert.match((await alert.textContent())!, /raise the cap on the Wallet screen/);
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n - 250_000n, "nothing charged past the cap");

    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByLabel("Cap, USDC").fill("5");
    await page.getByRole("button", { name: "Set the cap" }).click();
    await page.getByTestId("web-runs-state").filter({ hasText: "of 5.00 USDC" }).waitFor();
    await page.getByRole("button", { name: "Revoke web runs" }).click();
    await page.getByTestId("web-runs-state").filter({ hasText: /^Revoked/ }).waitFor();
    await page.screenshot({ path: `${SHOTS}/wallet-web-runs-revoked.png`, fullPage: true });
    await run(page, "revoked run");
    await page.getByRole("alert").filter({ hasText: "web_runs_revoked" }).waitFor();
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n - 250_000n, "nothing charged once revoked");

    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByRole("button", { name: "Allow web runs again" }).click();
    await page.getByTestId("web-runs-state").filter({ hasText: /^Allowed/ }).waitFor();
    await run(page, "allowed again");
    await page.getByTestId("run-output").waitFor();
  });

  it("says a parameter's fault beside its field in words, whether the form or the relayer found it, with no banner", async () => {
    const { market } = suite.stack;
    const payer = await market.payer(5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill("check my parameters");
    await page.getByLabel("language *").selectOption("en");
    const maxWords = page.locator("#param-max_words");
    const problem = page.getByTestId("param-problem");
    const submit = page.getByRole("button", { name: "Run and pay from my wallet" });

    // The form's own check: beside the field as it is typed; Run takes the reader there, no banner.
    await maxWords.fill("1.5");
    assert.equal(await problem.textContent(), "Must be a whole number.");
    await submit.click();
    assert.equal(await page.evaluate(() => document.activeElement?.id), "param-max_words");
    assert.equal(await page.getByRole("alert").count(), 0, "no banner repeating the field's message");

    // The relayer's check against the agent's schema (minimum 1): the same place, the same words.
    await maxWords.fill("0");
    assert.equal(await problem.count(), 0);
    await submit.click();
    await problem.waitFor();
    assert.equal(await problem.textContent(), "Must be 1 or more.");
    assert.equal(await maxWords.getAttribute("aria-invalid"), "true");
    assert.equal(await maxWords.getAttribute("aria-describedby"), "param-max_words-problem");
    assert.equal(await page.getByRole("alert").count(), 0, "no banner");
    assert.doesNotMatch((await page.locator("main").textContent())!, /validation_failed|parameters\.max_words|The relayer refused/);
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n, "nothing charged");
    await checkScreenAt(page, "run-parameter-refused");

    // Fixing the field clears its message, and the run goes through.
    await maxWords.fill("3");
    assert.equal(await problem.count(), 0);
    await submit.click();
    await page.getByTestId("run-output").waitFor();
  });

  it("sends the price it shows as the maximum: a price raised on chain is refused, and the agent page says why the listing is paused", async () => {
    const { market } = suite.stack;
    const payer = await market.payer(5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByTestId("run-max-price").filter({ hasText: "At most 0.25 USDC" }).waitFor();
    await page.getByTestId("circuit").filter({ hasText: "closed" }).waitFor();

    // The creator raises the price on chain while the page shows the old one.
    await repriceOnChain(market, agent, { kind: "PayPerUse", priceUsdc: 500_000n });
    const before = await market.usdc(payer.tokenAccount);
    await page.getByLabel("Task").fill("after the raise");
    await page.getByLabel("language *").selectOption("en");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent())!, /agent_terms_changed/);
    assert.equal(await market.usdc(payer.tokenAccount), before, "nothing charged");

    // The refusal makes the page read the listing again: it says why, and the form stops offering the call.
    await page.getByTestId("listing-status").filter({ hasText: "paused: its on-chain price is not its listing's" }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Run and pay from my wallet" }).isDisabled(), true);
    await page.screenshot({ path: `${SHOTS}/agent-terms-changed.png`, fullPage: true });

    // Its creator is told why, and listing the new price brings it back.
    const creator = await suite.open(agent.creator.wallet);
    await signInWithTestWallet(creator);
    await creator.page.getByRole("link", { name: "My agents" }).click();
    const card = creator.page.getByTestId("my-agent").filter({ hasText: agent.address.toBase58() });
    await card.getByTestId("listing-pause-reason").filter({ hasText: "the agent's price (or listing hash) on chain is not its listing's" }).waitFor();
    const token = await signIn(suite.stack.relayer, agent.creator.wallet);
    const patched = await api<{ status: string }>(suite.stack.relayer, "PATCH", `/v1/agents/${agent.address.toBase58()}?network=devnet`, {
      token,
      body: { pricing: { model: "pay_per_use", price_usdc: "0.500000" } },
    });
    assert.equal(patched.body.status, "active", JSON.stringify(patched.body));
    // Opened again, the agent page reads the listing again.
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByRole("heading", { name: "Wallet", exact: true }).waitFor();
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByTestId("run-max-price").filter({ hasText: "At most 0.50 USDC" }).waitFor();
    await page.getByTestId("listing-status").filter({ hasText: "active" }).waitFor();
  });

  it("shows a metered agent's price with the most a call costs, holds that much, and its receipt shows the units charged, held and returned", async () => {
    const { market } = suite.stack;
    const metered = await listAgent(market, suite.stack.relayer, { pricing: { kind: "Metered", pricePerUnitUsdc: 1_000n, maxUnitsPerCall: 500n } });
    suite.defer(() => metered.server.close());
    // One unit a word of the task, as the creator signs it.
    metered.server.units = (request) => BigInt(request.task.split(/\s+/).length);
    const payer = await market.payer(5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${metered.address.toBase58()}`);
    await page.getByText("0.001 USDC per words, up to 0.50 USDC a call").waitFor();
    assert.match((await page.getByTestId("run-max-price").textContent())!, /^Up to 0\.50 USDC for this call, held from your wallet: it is charged 0\.001 USDC per words it used/);

    await page.getByLabel("Task").fill("one two three four five six seven");
    await page.getByLabel("language *").selectOption("en");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    await page.getByTestId("run-output").waitFor();
    const summary = page.getByTestId("charge-summary");
    assert.deepEqual(
      [await summary.getByTestId("charged").textContent(), await summary.getByTestId("charge-units").textContent(), await summary.getByTestId("charge-held").textContent(), await summary.getByTestId("charge-returned").textContent()],
      ["0.007 USDC", " for 7 words", "0.50 USDC", "0.493 USDC"],
    );
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n - 7_000n, "charged the units used, the rest returned");
    await page.getByTestId("receipt-verdict").waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("receipt-verdict").textContent())!, /Receipt verified/);
    await page.screenshot({ path: `${SHOTS}/metered-run-receipt.png`, fullPage: true });
  });
});
