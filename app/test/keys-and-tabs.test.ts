// The keys list follows a key's calls (last used, executions, spent) without a reload, a sign-in
// in one tab reaches the tabs already open, as a sign-out does, and the Wallet screen's allowance
// field is explained for the keys the wallet has.
import { strict as assert } from "node:assert";

import { execute, listAgent, newPayer } from "@agent-market/tests/marketplace";
import { api, signIn } from "@agent-market/tests/relayer";
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

  it("words the allowance field for the wallet's keys: an amount without keys, the sum of their caps with them", async () => {
    const { market, relayer } = suite.stack;
    const owner = await market.payer(10_000_000n);
    const dashboard = await suite.open(owner.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    const hint = page.getByTestId("allowance-hint");
    const toWallet = async () => {
      // The screen reads the keys as it opens.
      await page.getByRole("link", { name: "API keys" }).click();
      await page.getByRole("link", { name: "Wallet", exact: true }).click();
    };

    await toWallet();
    await hint.filter({ hasText: /^Enter an amount: runs from the Marketplace draw on it, and so will the API keys you generate\.$/ }).waitFor();
    assert.doesNotMatch((await hint.textContent())!, /caps/);
    await checkScreenAt(page, "wallet-hint-no-keys");

    const token = await signIn(relayer, owner.wallet);
    for (const [name, cap] of [["cron", "2.000000"], ["ci", "3.500000"]] as const) {
      const created = await api(relayer, "POST", "/v1/keys", { token, body: { name, environment: "test", spending_cap_usdc: cap } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
    }
    await toWallet();
    await hint.filter({ hasText: /^Left empty, the allowance is the sum of your 2 API keys' spending caps: 5\.50 USDC\.$/ }).waitFor();
    await checkScreenAt(page, "wallet-hint-keys");
    // The field left empty sets just that.
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    await page.getByTestId("allowance-sent").waitFor({ timeout: 60_000 });
    await page.getByTestId("allowance").filter({ hasText: /^5\.50 USDC$/ }).waitFor();

    const uncapped = await api(relayer, "POST", "/v1/keys", { token, body: { name: "batch", environment: "test" } });
    assert.equal(uncapped.status, 201, JSON.stringify(uncapped.body));
    await toWallet();
    await hint.filter({ hasText: /^Enter an amount: left empty, the allowance would be the sum of your API keys' spending caps, but “batch” has no cap\.$/ }).waitFor();
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    assert.equal(
      await page.getByTestId("allowance-problem").textContent(),
      "Enter an amount: an empty field adds up your API keys' spending caps, and “batch” has none.",
    );
  });
});
