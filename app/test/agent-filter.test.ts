// Executions and Usage narrowed to one agent by its name, chosen among the agents the wallet paid
// or registered (two listed under one name told apart by their short addresses), and an empty
// filtered result that says what was asked for and offers everything again (issue 48, item 8).
import { strict as assert } from "node:assert";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator } from "@agent-market/tests/creator-server";
import { execute, listAgent, newPayer, pricingWire, registerOnChain, type ListedAgent, type Payer } from "@agent-market/tests/marketplace";
import { api } from "@agent-market/tests/relayer";
import { Keypair } from "@solana/web3.js";
import type { Page } from "playwright-core";

import { signInWithTestWallet } from "./browser.js";
import { checkScreenAt } from "./page-checks.js";
import { waitFor } from "./stack.js";
import { dashboardSuite } from "./suite.js";

const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;

describe("executions and usage by agent", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();
  let first: ListedAgent;
  let second: ListedAgent;
  let payer: Payer;
  /** An agent the payer registered and never ran. */
  let own: string;

  before(async () => {
    const { market, relayer, graphqlUrl } = suite.stack;
    first = await listAgent(market, relayer);
    suite.defer(() => first.server.close());
    second = await listAgent(market, relayer);
    suite.defer(() => second.server.close());
    payer = await newPayer(market, relayer, 10_000_000n);

    const server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    suite.defer(() => server.close());
    const listing = { name: "Summarizer", description: "Echoes the task and counts its words.", tags: ["test"], input_schema: ECHO_INPUT_SCHEMA, output_schema: ECHO_OUTPUT_SCHEMA };
    const pricing = { kind: "PayPerUse", priceUsdc: 250_000n } as const;
    const registered = await registerOnChain(market, { signing: server.signing, endpoint: server.url, listing, pricing, maxExecutionSecs: 3, creator: payer });
    own = registered.address.toBase58();
    const listed = await api(relayer, "POST", "/v1/agents", {
      token: payer.token,
      body: { agent: own, ...listing, endpoint: server.url, signing_key: server.signing.publicKey.toBase58(), pricing: pricingWire(pricing) },
    });
    assert.equal(listed.status, 201, JSON.stringify(listed.body));

    for (const agent of [first, first, second]) {
      const ran = await execute(relayer, payer, agent.address);
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
    }
    await waitFor("the payer's three executions and its agent in the indexer", async () => {
      const response = await fetch(graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query: `query($w: String!) { usage(dimension: PAYER, subject: $w) { totals(window: H24) { executions } } creator(address: $w) { agents { address } } }`,
          variables: { w: payer.wallet.publicKey.toBase58() },
        }),
      });
      const { data } = (await response.json()) as { data: { usage: { totals: { executions: number } }; creator: { agents: unknown[] } } };
      return data.usage.totals.executions === 3 && data.creator.agents.length === 1;
    });
  });

  async function signedIn(): Promise<Page> {
    const dashboard = await suite.open(payer.wallet);
    await signInWithTestWallet(dashboard);
    return dashboard.page;
  }

  const firstLabel = () => `Echo (${short(first.address.toBase58())})`;
  const secondLabel = () => `Echo (${short(second.address.toBase58())})`;

  it("lists the agents the wallet paid or registered by name, and shows one agent's executions and usage", async () => {
    const page = await signedIn();
    await page.getByRole("link", { name: "Executions" }).click();
    const rows = page.getByTestId("execution-row");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="execution-row"]').length === 3);
    const picker = page.getByRole("combobox", { name: "Agent", exact: true });
    // Two agents listed as "Echo" go by their short addresses; the payer's own agent by its name.
    await picker.locator("option", { hasText: "Summarizer" }).waitFor({ state: "attached" });
    const options = await picker.locator("option").allTextContents();
    assert.equal(options[0], "All agents");
    assert.deepEqual([...options.slice(1)].sort(), [firstLabel(), secondLabel(), "Summarizer"].sort());

    await picker.selectOption({ label: firstLabel() });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="execution-row"]').length === 2);
    assert.deepEqual(await rows.getByTestId("agent-name").evaluateAll((names) => names.map((n) => n.getAttribute("title"))), [
      first.address.toBase58(),
      first.address.toBase58(),
    ]);
    await checkScreenAt(page, "executions-by-agent");
    await picker.selectOption({ label: secondLabel() });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="execution-row"]').length === 1);
    assert.equal(await rows.getByTestId("agent-name").getAttribute("title"), second.address.toBase58());

    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByRole("combobox", { name: "Of", exact: true }).selectOption("AGENT");
    await page.getByRole("combobox", { name: "Agent", exact: true }).selectOption({ label: firstLabel() });
    await page.getByTestId("total-executions").filter({ hasText: /^2$/ }).waitFor();
    await page.getByText("An agent's figures count every caller's executions, not only this wallet's.").waitFor();
    await checkScreenAt(page, "usage-by-agent");
  });

  it("says what an empty filtered result was asked for, and shows everything again on request", async () => {
    const page = await signedIn();
    await page.getByRole("link", { name: "Executions" }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="execution-row"]').length === 3);
    const picker = page.getByRole("combobox", { name: "Agent", exact: true });
    const noMatch = page.getByTestId("no-match");

    await picker.selectOption({ label: "Summarizer" });
    await noMatch.filter({ hasText: /^No executions of Summarizer\.$/ }).waitFor();
    assert.equal(await page.getByText("Run an agent from the Marketplace").count(), 0, "not the message of a wallet without executions");

    await picker.selectOption({ label: secondLabel() });
    await page.getByRole("combobox", { name: "State", exact: true }).selectOption("REFUNDED");
    await noMatch.filter({ hasText: `No refunded executions of ${secondLabel()}.` }).waitFor();
    await checkScreenAt(page, "executions-no-match");
    await page.getByRole("button", { name: "Show all executions" }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="execution-row"]').length === 3);
    assert.equal(await picker.inputValue(), "");
    assert.equal(await page.getByRole("combobox", { name: "State", exact: true }).inputValue(), "");
    assert.equal(await page.evaluate(() => document.activeElement?.closest("label")?.textContent?.startsWith("Agent")), true, "focus back on the filters");

    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByRole("combobox", { name: "Of", exact: true }).selectOption("AGENT");
    await page.getByRole("combobox", { name: "Agent", exact: true }).selectOption({ label: "Summarizer" });
    await noMatch.filter({ hasText: /^No executions of Summarizer in the last 24 hours\.$/ }).waitFor();
    await checkScreenAt(page, "usage-no-match");
    await page.getByRole("button", { name: "Show this wallet's usage" }).click();
    await page.getByTestId("total-executions").filter({ hasText: /^3$/ }).waitFor();
    assert.equal(await page.getByRole("combobox", { name: "Of", exact: true }).inputValue(), "PAYER");

    // A wallet without any execution is told where executions come from.
    const newcomer = await suite.open(Keypair.generate());
    await signInWithTestWallet(newcomer);
    await newcomer.page.getByRole("link", { name: "Executions" }).click();
    await newcomer.page.getByText("No executions yet. Run an agent from the Marketplace, or call one with an API key.").waitFor();
  });
});
