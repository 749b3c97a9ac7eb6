// Pricing from the web, in a real browser against a real relayer, indexer and localnet: a creator
// lists an agent with a hybrid plan (after the form refuses prices below the market's minimum, as
// the program would), and later changes a listed agent's pricing and input schema from My agents,
// the wallet signing update_agent before the relayer's listing follows.
import { strict as assert } from "node:assert";

import { fetchAgent, formatSigningKeyProof, listingHash, signSigningKeyProof } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator, type CreatorServer } from "@agent-market/tests/creator-server";
import { MIN_COLLATERAL_USDC } from "@agent-market/tests/fixtures";
import { listAgent } from "@agent-market/tests/marketplace";
import { api } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreen, checkScreenAt } from "./page-checks.js";
import { waitFor } from "./stack.js";
import { dashboardSuite } from "./suite.js";

interface ListingBody {
  pricing: Record<string, unknown>;
  input_schema: unknown;
}

describe("pricing in the dashboard", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();
  let server: CreatorServer;

  before(async () => {
    server = await startCreator(suite.stack.relayer.marketplaceKey.publicKey.toBase58());
    suite.defer(() => server.close());
  });

  it("refuses plans below the market's minimum, then lists an agent on a hybrid plan, the chain and the listing agreeing", async () => {
    const { stack } = suite;
    const creator = await stack.market.walletWithUsdc(MIN_COLLATERAL_USDC);
    const dashboard = await suite.open(creator.wallet, 375);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("navigation").getByRole("link", { name: "List an agent" }).click();
    await page.getByTestId("minimum-collateral").waitFor();
    await page.getByLabel("Name").fill("Echo by the month");
    await page.getByLabel("Description").fill("Echoes the task and counts its words.");
    await page.getByLabel("Tags (comma separated)").fill("test, plans");
    await page.getByLabel("Endpoint (your service's base URL)").fill(server.url);
    await page.getByLabel("Public key (base58)").fill(server.signing.publicKey.toBase58());
    const planned = (await page.getByTestId("key-proof-agent").textContent())!;
    await page
      .getByLabel("Key proof (base58)")
      .fill(formatSigningKeyProof(signSigningKeyProof(server.signing.secretKey, planned, creator.wallet.publicKey)));
    await page.getByLabel("Input schema (JSON Schema)").fill(JSON.stringify(ECHO_INPUT_SCHEMA, null, 2));
    await page.getByLabel("Output schema (JSON Schema)").fill(JSON.stringify(ECHO_OUTPUT_SCHEMA, null, 2));
    const problems = () => page.getByTestId("listing-problems").locator("li").allTextContents();
    const check = page.getByRole("button", { name: "Check my endpoint" });

    await page.getByLabel("Subscription").check();
    await page.getByLabel("Price per period, USDC").fill("0.001");
    await page.getByLabel("Period, days (up to 366)").fill("0");
    await check.click();
    assert.deepEqual(await problems(), [
      "Period, days: a whole number from 1 to 366.",
      "Price per period: at least the market's minimum price of one call, 0.01 USDC.",
    ]);
    // The program's longest period (MAX_SUBSCRIPTION_PERIOD_SECS) is a leap year.
    await page.getByLabel("Period, days (up to 366)").fill("367");
    await check.click();
    assert.deepEqual(await problems(), [
      "Period, days: a whole number from 1 to 366.",
      "Price per period: at least the market's minimum price of one call, 0.01 USDC.",
    ]);

    await page.getByLabel("Hybrid").check();
    await page.getByLabel("Period, days (up to 366)").fill("30");
    await page.getByLabel("Price per period, USDC").fill("0.5");
    await page.getByLabel("Calls included per period").fill("100");
    await page.getByLabel("Price per call beyond them, USDC").fill("0.001");
    await check.click();
    assert.deepEqual(await problems(), [
      "Price per period: at least 1.00 USDC, the market's minimum (0.01 USDC) for each of the 100 calls included.",
      "Price per call beyond them: at least the market's minimum, 0.01 USDC.",
    ]);
    await checkScreenAt(page, "list-agent-hybrid-refused");

    await page.getByLabel("Price per period, USDC").fill("20");
    await page.getByLabel("Price per call beyond them, USDC").fill("0.3");
    await check.click();
    await page.locator('[data-testid="step-conformance"].ok').waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Sign, register and list" }).click();
    await page.getByTestId("listed").waitFor({ timeout: 60_000 });

    const agent = (await page.getByTestId("registered-agent").textContent())!;
    const account = (await fetchAgent(stack.market.connection, new PublicKey(agent), { programId: stack.market.programId }))!;
    assert.deepEqual(account.pricing, { kind: "Hybrid", periodPriceUsdc: 20_000_000n, periodSecs: 30 * 86_400, includedCalls: 100, overagePriceUsdc: 300_000n });
    const listing = await api<ListingBody>(stack.relayer, "GET", `/v1/agents/${agent}`);
    assert.deepEqual(listing.body.pricing, {
      model: "hybrid",
      period_price_usdc: "20.000000",
      period_secs: 30 * 86_400,
      included_calls: 100,
      overage_price_usdc: "0.300000",
    });
  });

  it("changes a listed agent's pricing and input schema from My agents: update_agent, then the listing", async () => {
    const { stack } = suite;
    const listed = await listAgent(stack.market, stack.relayer);
    suite.defer(() => listed.server.close());
    const address = listed.address.toBase58();
    await waitFor("the agent in the indexer", async () => {
      const response = await fetch(stack.graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `query($a: String!) { creator(address: $a) { agents { address } } }`, variables: { a: listed.creator.wallet.publicKey.toBase58() } }),
      });
      const body = (await response.json()) as { data: { creator: { agents: { address: string }[] } } };
      return body.data.creator.agents.some((a) => a.address === address);
    });

    const dashboard = await suite.open(listed.creator.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: address });
    assert.equal(await card.getByTestId("listing-pricing").textContent(), "0.25 USDC per call");
    await card.getByRole("button", { name: "Edit the listing of Echo" }).click();
    const editor = card.getByTestId("edit-listing");
    assert.equal(await editor.getByLabel("Price per call, USDC").inputValue(), "0.25", "the editor starts from the listing, as a person types it");

    await editor.getByLabel("Subscription").check();
    await editor.getByLabel("Price per period, USDC").fill("5");
    await editor.getByLabel("Period, days (up to 366)").fill("7");
    await editor.getByLabel("Output schema (JSON Schema)").fill("[]");
    await editor.getByRole("button", { name: "Sign and save" }).click();
    assert.deepEqual(await editor.getByTestId("edit-problems").locator("li").allTextContents(), ["Output schema must be a JSON object (a JSON Schema)."]);

    const inputSchema = { ...ECHO_INPUT_SCHEMA, description: "A task to echo, with its language." };
    await editor.getByLabel("Input schema (JSON Schema)").fill(JSON.stringify(inputSchema, null, 2));
    await editor.getByLabel("Output schema (JSON Schema)").fill(JSON.stringify(ECHO_OUTPUT_SCHEMA, null, 2));
    await editor.getByRole("button", { name: "Sign and save" }).click();
    await editor.getByTestId("edit-saved").waitFor({ timeout: 60_000 });
    await checkScreen(page, "my-agents-edit-listing");
    assert.equal(await card.getByTestId("listing-pricing").textContent(), "5.00 USDC per 7 days");

    const account = (await fetchAgent(stack.market.connection, listed.address, { programId: stack.market.programId }))!;
    assert.deepEqual(account.pricing, { kind: "Subscription", periodPriceUsdc: 5_000_000n, periodSecs: 7 * 86_400 });
    const document = { name: "Echo", description: "Echoes the task and counts its words.", tags: ["test"], input_schema: inputSchema, output_schema: ECHO_OUTPUT_SCHEMA };
    assert.deepEqual([...account.listingHash], [...listingHash(document)], "the chain holds the new document's hash");
    const listing = await api<ListingBody>(stack.relayer, "GET", `/v1/agents/${address}`);
    assert.deepEqual(listing.body.pricing, { model: "subscription", period_price_usdc: "5.000000", period_secs: 7 * 86_400 });
    assert.deepEqual(listing.body.input_schema, inputSchema);
  });
});
