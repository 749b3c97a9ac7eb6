// An agent's page says why it takes no calls: a paused agent's disabled Run button has its pause
// reason beside it; a retired agent has no circuit line saying it takes calls, and no Run form,
// only a statement that it is retired.
import { strict as assert } from "node:assert";

import { listAgent } from "@agent-market/tests/marketplace";
import { api, signIn } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreenAt } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

describe("an agent's page when it takes no calls", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();

  it("gives a paused agent's disabled Run button its reason, and a retired agent a statement instead of the form", async () => {
    const { market, relayer } = suite.stack;
    const agent = await listAgent(market, relayer);
    suite.defer(() => agent.server.close());
    const path = `/v1/agents/${agent.address.toBase58()}`;
    const token = await signIn(relayer, agent.creator.wallet);
    assert.equal((await api<{ status: string }>(relayer, "POST", `${path}/pause`, { token })).body.status, "paused");

    const payer = await market.payer(1_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    const run = page.getByRole("button", { name: "Run and pay from my wallet" });
    await run.waitFor();
    assert.equal(await run.isDisabled(), true);
    assert.equal(await page.getByTestId("run-refusal").textContent(), "Not taking calls: paused by its creator.");
    // The reason is the button's description, so a screen reader says it with the button.
    assert.equal(await run.getAttribute("aria-describedby"), "run-refusal");
    assert.equal(await page.getByTestId("circuit").count(), 0, "a paused agent takes no calls, whatever its breaker");
    await checkScreenAt(page, "agent-paused");

    assert.equal((await api<{ status: string }>(relayer, "POST", `${path}/retire`, { token })).body.status, "retired");
    await page.reload();
    await page.getByTestId("run-unavailable").waitFor();
    assert.match((await page.getByTestId("run-unavailable").textContent())!, /^This agent is retired/);
    assert.equal(await page.getByRole("button", { name: "Run and pay from my wallet" }).count(), 0, "no form for a retired agent");
    assert.equal(await page.getByLabel("Task").count(), 0);
    assert.equal(await page.getByTestId("circuit").count(), 0, "no circuit line saying it takes calls");
    assert.equal(await page.getByTestId("listing-status").textContent(), "retired");
    await checkScreenAt(page, "agent-retired");
  });
});
