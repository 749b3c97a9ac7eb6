// The keys list follows a key's calls (last used, executions, spent) without a reload, and a
// sign-in in one tab reaches the tabs already open, as a sign-out does.
import { strict as assert } from "node:assert";

import { execute, listAgent, newPayer } from "@agent-market/tests/marketplace";
import { openTab, signInWithTestWallet } from "./browser.js";
import { checkScreenAt } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

describe("the keys list and open tabs", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();

  it("shows a key's last use once it made a call, with no reload", async () => {
    const { market, relayer } = suite.stack;
    const agent = await listAgent(market, relayer);
    suite.defer(() => agent.server.close());
    const payer = await newPayer(market, relayer, 5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByLabel("Name").fill("cron");
    await page.getByRole("button", { name: "Generate key" }).click();
    const secret = (await page.getByTestId("new-key-secret").textContent())!;
    await page.getByRole("button", { name: "I have stored it" }).click();
    const row = page.getByTestId("key-row").filter({ hasText: "cron" });
    await row.getByText("never used").waitFor();
    assert.equal(await row.locator('[data-label="Last used"]').textContent(), "never");

    const ran = await execute(relayer, { apiKey: secret }, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    // The screen is left as it was: the chain's record of the call makes it read the list again.
    await row.locator('[data-label="Last used"]').filter({ hasNotText: /^never$/ }).waitFor({ timeout: 20_000 });
    assert.equal(await row.getByText("never used").count(), 0);
    await row.locator('[data-label="Executions"]').filter({ hasText: /^1$/ }).waitFor({ timeout: 20_000 });
    await checkScreenAt(page, "keys-used");
  });

  it("signs in every open tab when one signs in, and out of every tab when one signs out", async () => {
    const payer = await suite.stack.market.payer(1_000_000n);
    const first = await suite.open(payer.wallet);
    const second = await openTab(first.context, payer.wallet);
    suite.opened.push(second);
    await first.page.getByRole("button", { name: "Test Wallet", exact: true }).waitFor();
    await signInWithTestWallet(second);
    // The first tab, untouched since it loaded, follows.
    await first.page.getByRole("heading", { name: "API keys", level: 1 }).waitFor({ timeout: 10_000 });
    await first.page.getByTitle(payer.wallet.publicKey.toBase58()).waitFor();

    await second.page.getByRole("button", { name: "Sign out" }).click();
    await first.page.getByRole("button", { name: "Test Wallet", exact: true }).waitFor({ timeout: 10_000 });
  });
});
