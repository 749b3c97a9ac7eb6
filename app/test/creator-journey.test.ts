// A newcomer's whole creator journey from the browser alone, as on a fresh `npm start`: the local
// test wallet, funded in one click; an agent listed with the starter service (no service of their
// own, nothing done in a terminal), after a check whose failure says in words what the service
// answered and what to change; a paid run with its receipt verified; a dispute of it; the
// development arbiter upholding it with a slash; and the agent topped up and resumed in one click.
import { strict as assert } from "node:assert";

import { collateralVaultPda } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { api } from "@agent-market/tests/relayer";
import { checkScreen, checkScreenAt } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

const STATEMENT = "It answered back what I sent instead of a summary.";

describe("a newcomer's creator journey, from the browser alone", function () {
  this.timeout(600_000);
  // Refusals the browser logs while the screens say them in words: the failed endpoint check (422),
  // and resuming before the top-up (422).
  const suite = dashboardSuite({ expectedError: (error) => error.includes("status of 422") });

  it("lists an agent with the starter service, runs it, disputes it, sees it slashed and resumes it", async () => {
    const { stack } = suite;
    const starter = stack.starter!;
    const dashboard = await suite.open(null, 1280);
    const { page } = dashboard;
    const nav = page.getByRole("navigation");

    // The browser's own wallet, funded in one click, with an allowance to pay from.
    await page.getByRole("button", { name: "Use the local test wallet" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    const wallet = new PublicKey((await page.locator("header .who .mono").getAttribute("title"))!);
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByRole("button", { name: "Fund with test SOL and USDC" }).click();
    await page.getByTestId("balance").filter({ hasText: /^1000\.00 USDC$/ }).waitFor({ timeout: 60_000 });
    await page.getByLabel("Allowance, USDC").fill("20");
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    await page.getByTestId("allowance-sent").waitFor({ timeout: 60_000 });

    // Listing: the starter service fills the endpoint, the key and the schemas.
    await nav.getByRole("link", { name: "List an agent" }).click();
    const offer = page.getByTestId("starter-offer");
    await offer.waitFor();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "list-agent-starter-offer");
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    const planned = (await page.getByTestId("planned-agent").textContent())!;
    await offer.getByRole("button", { name: "Use the starter service" }).click();
    await offer.filter({ hasText: "The starter service will answer for this agent" }).waitFor();
    const endpoint = page.getByLabel("Endpoint (your service's base URL)");
    assert.equal(await endpoint.inputValue(), `${starter.url}/agents/${planned}`);
    assert.ok(await page.getByLabel("The starter service's key").isChecked());
    await page.getByTestId("starter-key").waitFor();
    assert.match(await page.getByLabel("Output schema (JSON Schema)").inputValue(), /"reply"/);
    await page.getByLabel("Name", { exact: true }).fill("My first agent");
    await page.getByLabel("Description", { exact: true }).fill("Answers back what it is sent, and counts the words.");
    await page.getByLabel("Price per call, USDC").fill("0.05");

    // Pointed at an address the service holds no key for, the check says what it answered and what to change.
    const stranger = Keypair.generate().publicKey.toBase58();
    await endpoint.fill(`${starter.url}/agents/${stranger}`);
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    const conformance = page.getByTestId("step-conformance");
    await page.locator('[data-testid="step-conformance"].bad').waitFor({ timeout: 60_000 });
    assert.equal(
      await conformance.getByTestId("probe-answered").textContent(),
      `Your service answered 403 agent_not_served: “this starter host holds no signing key for agent ${stranger}: set the starter up for it on the dashboard's List an agent screen”.`,
    );
    assert.equal(
      await conformance.getByTestId("probe-change").textContent(),
      `A service answers only for the agent addresses it was started with, and this agent will be ${planned}. Start your service with that address, or use the starter service. The example agents of this marketplace answer for their own listings only.`,
    );
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreenAt(page, "list-agent-probe-advice");
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    await endpoint.fill(`${starter.url}/agents/${planned}`);
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    await page.locator('[data-testid="step-conformance"].ok').waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Sign, register and list" }).click();
    const listed = page.getByTestId("listed");
    await listed.waitFor({ timeout: 60_000 });
    assert.deepEqual(starter.agents().includes(planned), true, "the starter host serves the agent");

    // A run of it, paid from the wallet, its receipt verified in the browser.
    await listed.getByRole("link", { name: "Open its page" }).click();
    await page.getByLabel("Task").fill("Say it back");
    await page.getByLabel("text *").fill("hello from my first agent");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    const output = page.getByTestId("run-output");
    await output.waitFor({ timeout: 60_000 });
    assert.match((await output.textContent())!, /You said: hello from my first agent/);
    await page.getByTestId("receipt-verdict").filter({ hasText: /Receipt verified/ }).waitFor({ timeout: 60_000 });

    // Paused while the dispute runs its course.
    await nav.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: planned });
    await card.getByRole("button", { name: "Pause My first agent" }).click();
    await card.getByTestId("listing-status").filter({ hasText: "paused" }).waitFor({ timeout: 30_000 });

    // The dispute, from the execution's details, once its settlement is final.
    await nav.getByRole("link", { name: "Executions" }).click();
    await page.getByRole("button", { name: "Details" }).first().click();
    await page.getByTestId("execution-finality").filter({ hasText: /^finalized$/ }).waitFor({ timeout: 60_000 });
    await page.getByLabel("Statement").fill(STATEMENT);
    await page.getByRole("button", { name: "Sign and open the dispute" }).click();
    await page.getByTestId("dispute-opened").waitFor({ timeout: 60_000 });

    // The development arbiter upholds it with a 0.50 USDC slash.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in as the development arbiter" }).click();
    await nav.getByRole("link", { name: "Arbiter" }).click();
    const item = page.getByTestId("arbiter-dispute").filter({ hasText: STATEMENT });
    await item.getByLabel("Slash, USDC").fill("0.5");
    await item.getByRole("button", { name: "Sign: uphold and slash" }).click();
    await item.getByTestId("resolved").waitFor({ timeout: 60_000 });
    const vault = collateralVaultPda(new PublicKey(planned), stack.market.programId);
    assert.equal(await stack.market.usdc(vault), 99_500_000n, "the slash left the collateral");

    // Back as the newcomer: the agent says what is missing, and resumes once topped up, in one click.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Use the local test wallet" }).click();
    await page.locator(`header .who .mono[title="${wallet.toBase58()}"]`).waitFor();
    await nav.getByRole("link", { name: "My agents" }).click();
    await card.getByTestId("collateral-usdc").filter({ hasText: /^99\.50 USDC$/ }).waitFor({ timeout: 30_000 });
    await card.getByRole("button", { name: "Resume My first agent" }).click();
    const refusal = card.getByTestId("collateral-short").filter({ hasText: "cannot resume yet" });
    await refusal.waitFor();
    await checkScreenAt(page, "journey-resume-refused");
    await refusal.getByRole("button", { name: "Sign: top up 0.50 USDC and resume" }).click();
    await card.getByTestId("listing-status").filter({ hasText: "listing active" }).waitFor({ timeout: 60_000 });
    await card.getByTestId("collateral-usdc").filter({ hasText: /^100\.00 USDC$/ }).waitFor();
    const listing = await api<{ status: string; collateral_usdc: string }>(stack.relayer, "GET", `/v1/agents/${planned}`);
    assert.deepEqual([listing.body.status, listing.body.collateral_usdc], ["active", "100.000000"]);
    await checkScreenAt(page, "journey-resumed");
  });
});
