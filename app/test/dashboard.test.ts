// The dashboard in a real browser (Debian's chromium) against a real relayer, indexer and chain,
// signed in with a Wallet Standard wallet injected into the page.
import { strict as assert } from "node:assert";

import { formatUsdc } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { execute, listAgent, newPayer, tokenAccountOf, type ListedAgent, type Payer } from "@agent-market/tests/marketplace";
import { api, signIn } from "@agent-market/tests/relayer";
import { signInWithTestWallet, type DashboardPage } from "./browser.js";
import { checkScreen, checkScreenAt, SHOTS, textLines } from "./page-checks.js";
import { waitFor, type Stack } from "./stack.js";
import { dashboardSuite } from "./suite.js";

async function indexed(stack: Stack, query: string, variables: Record<string, unknown>): Promise<any> {
  const response = await fetch(stack.graphqlUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: unknown; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

describe("the dashboard in a browser", function () {
  this.timeout(300_000);
  // Chromium logs every 4xx answer as a console error; a 402 the page receives and explains is the
  // behaviour under test, not an error of the app.
  const suite = dashboardSuite({ expectedError: (error) => error.includes("the server responded with a status of 402") });
  let stack: Stack;
  let agent: ListedAgent;

  before(async () => {
    stack = suite.stack;
    agent = await listAgent(stack.market, stack.relayer);
    suite.defer(() => agent.server.close());
  });

  function dashboardFor(payer: Pick<Payer, "wallet"> | null, width = 1280): Promise<DashboardPage> {
    return suite.open(payer?.wallet ?? null, width);
  }

  it("is served by the relayer on its own origin: files, index.html for app paths, its configuration, JSON errors under /v1", async () => {
    const base = stack.relayer.url;
    const page = await fetch(`${base}/some/app/path`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type")!, /^text\/html/);
    assert.match(page.headers.get("content-security-policy")!, /default-src 'self'/);
    const html = await page.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${base}${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get("content-type")!, /^text\/javascript/);
    assert.match(asset.headers.get("cache-control")!, /immutable/);
    // Nothing outside DASHBOARD_DIR, however the path is spelled.
    const escaped = await fetch(`${base}/assets/..%2f..%2f..%2fpackage.json`);
    assert.equal(await escaped.text(), html);
    const missing = await api(stack.relayer, "GET", "/v1/no-such-route");
    assert.equal(missing.status, 404);
    assert.equal((missing.body as { error: { code: string } }).error.code, "route_not_found");
    const config = await (await fetch(`${base}/dashboard-config.json`)).json();
    assert.deepEqual(config, {
      arbiters: { devnet: stack.market.arbiter.publicKey.toBase58(), mainnet: null },
      // localnet's arbiter is the committed development one: offered to try the arbiter's screens.
      dev_arbiter_secret_key: Array.from(stack.market.arbiter.secretKey),
      indexer_graphql_url: stack.graphqlUrl,
      networks: ["devnet"],
      localnet: true,
      // npm start's starter host, which the stack runs too: the listing screen offers it.
      starter_agent: true,
      localnet_rpc_url: stack.market.localnet.rpcUrl,
      rpc_path: "/dashboard-rpc",
      rpc_urls: { devnet: null, mainnet: null },
    });
  });

  it("relays the local chain's RPC for the page, and only the methods the page needs", async () => {
    const slot = await api<{ result: number }>(stack.relayer, "POST", "/dashboard-rpc", { body: { jsonrpc: "2.0", id: 1, method: "getSlot", params: [] } });
    assert.equal(slot.status, 200);
    assert.equal(typeof slot.body.result, "number");
    const airdrop = await api(stack.relayer, "POST", "/dashboard-rpc", { body: { jsonrpc: "2.0", id: 1, method: "requestAirdrop", params: [] } });
    assert.equal(airdrop.status, 400);
    assert.equal((airdrop.body as { error: { code: string } }).error.code, "validation_failed");
  });

  it("signs in with a Wallet Standard wallet (Sign-In With Solana) and shows the keys screen", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const dashboard = await dashboardFor(payer);
    await signInWithTestWallet(dashboard);
    const address = payer.wallet.publicKey.toBase58();
    await dashboard.page.screenshot({ path: `${SHOTS}/signed-in.png` });
    await dashboard.page.getByTitle(address).waitFor();
    // The session the page opened is the wallet's, on the relayer's own origin.
    const token = await dashboard.page.evaluate(() => JSON.parse(localStorage.getItem("agent-market.session")!).token as string);
    const session = await api<{ wallet: string }>(stack.relayer, "GET", "/v1/auth/session", { token });
    assert.equal(session.body.wallet, address);
  });

  it("generates a key shown once, which executes an agent over plain HTTP, and is refused once revoked", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const { page } = await dashboardFor(payer);
    await signInWithTestWallet({ page } as DashboardPage);
    await page.getByLabel("Name").fill("ci server");
    await page.getByLabel("Spending cap, USDC (optional)").fill("2");
    await page.getByRole("button", { name: "Generate key" }).click();
    const secret = (await page.getByTestId("new-key-secret").textContent())!;
    assert.match(secret, /^svc_test_[0-9A-Za-z]{36}$/);
    await page.getByText("This is the only time the key is shown").waitFor();
    await page.screenshot({ path: `${SHOTS}/keys-new-secret.png`, fullPage: true });
    await page.getByRole("button", { name: "I have stored it" }).click();
    assert.equal(await page.getByText(secret).count(), 0, "the secret is gone once acknowledged");
    const row = page.getByTestId("key-row").filter({ hasText: "ci server" });
    await row.getByText(secret.slice(-4)).waitFor();
    // Spent and cap in USDC to the cent with the unit, the exact six places on hover.
    assert.deepEqual([await row.getByTestId("key-spent").textContent(), await row.getByTestId("key-cap").textContent()], ["0.00 USDC", "2.00 USDC"]);
    assert.deepEqual([await row.getByTestId("key-spent").getAttribute("title"), await row.getByTestId("key-cap").getAttribute("title")], ["0.000000 USDC", "2.000000 USDC"]);

    const ran = await execute(stack.relayer, { apiKey: secret }, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));

    // The key's prefix and last four on one line, not "svc_test_…" over "Qji0".
    assert.equal(await textLines(row.locator('[data-label="Key"]')), 1);
    await page.getByRole("button", { name: "Revoke ci server" }).click();
    // The confirmation keeps to the row's one line: both buttons side by side, each on one line.
    const confirm = page.getByRole("group", { name: "Confirm revoking ci server" });
    const [group, button] = [await confirm.boundingBox(), await confirm.getByRole("button", { name: "Cancel" }).boundingBox()];
    assert.ok(group!.height < button!.height * 1.5, `the confirmation is ${group!.height} px high, a button ${button!.height} px`);
    assert.equal(await textLines(confirm.getByRole("button", { name: "Revoke “ci server” now" })), 1);
    await page.getByRole("button", { name: "Revoke “ci server” now" }).click();
    await row.getByText("revoked").waitFor();
    const refused = await execute(stack.relayer, { apiKey: secret }, agent.address);
    assert.equal(refused.status, 401);
    assert.equal((refused.body as { error: { code: string } }).error.code, "revoked_api_key");
  });

  it("shows the executions just made on the usage chart, with the chain's numbers", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const charges: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const ran = await execute(stack.relayer, payer, agent.address);
      assert.equal(ran.status, 200, JSON.stringify(ran.body));
      charges.push(BigInt((ran.body as { charge: { amount_usdc: string } }).charge.amount_usdc.replace(".", "")));
    }
    const wallet = payer.wallet.publicKey.toBase58();
    await waitFor("the three executions, settled, in the indexer", async () => {
      const data = await indexed(stack, `query($w: String!) { usage(dimension: PAYER, subject: $w) { totals(window: H24) { settled } } }`, { w: wallet });
      return data.usage.totals.settled === 3;
    });
    const chain = await indexed(stack, `query($w: String!) { usage(dimension: PAYER, subject: $w) { totals(window: H24) { executions spent { usdc } } } }`, { w: wallet });

    const { page } = await dashboardFor(payer);
    await signInWithTestWallet({ page } as DashboardPage);
    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByTestId("total-executions").waitFor();
    assert.equal(await page.getByTestId("total-executions").textContent(), "3");
    assert.equal(chain.usage.totals.spent.usdc, formatUsdc(charges.reduce((a, b) => a + b, 0n)));
    assert.equal(chain.usage.totals.spent.usdc, "0.750000");
    assert.equal(await page.getByTestId("total-spent").textContent(), "0.75 USDC");
    assert.equal(await page.getByTestId("total-spent").getAttribute("title"), "0.750000 USDC");
    // The spending chart's top value and its hour's bar read as money too.
    const spent = page.getByTestId("chart-spent");
    assert.equal(await spent.locator(".chart-y span").first().textContent(), "1.00 USDC");
    const spentBars = await spent.locator("rect title").allTextContents();
    assert.equal(spentBars.filter((t) => t.endsWith(": 3 executions, 0.75 USDC")).length, 1, spentBars.join("\n"));
    // The hour's bar carries all three.
    const bars = await page.getByTestId("chart-executions").locator("rect title").allTextContents();
    assert.equal(bars.filter((t) => t.endsWith(": 3 executions")).length, 1, bars.join("\n"));
    // Axes a reader can use: the top value in its unit, readable hour labels, a spoken summary.
    const chart = page.getByTestId("chart-executions");
    assert.equal(await chart.locator(".chart-y span").first().textContent(), "5 executions");
    const ticks = await chart.locator(".chart-x span").allTextContents();
    assert.ok(ticks.length >= 4 && ticks.length <= 5 && ticks.every((t) => /^\d{1,2}( [AP]M)?$/.test(t)), ticks.join(","));
    assert.match((await chart.locator("svg").getAttribute("aria-label"))!, /^Executions per hour, local time, .+: 3 executions in all, most at .+ \(3 executions\)$/);
    // The period's radios sit level with the "Of" select beside them.
    const [radios, of] = [await page.getByRole("group", { name: "Period" }).boundingBox(), await page.getByLabel("Of").boundingBox()];
    assert.ok(Math.abs(radios!.y + radios!.height / 2 - (of!.y + of!.height / 2)) <= 2, `radios centred at ${radios!.y + radios!.height / 2}, the select at ${of!.y + of!.height / 2}`);
    await checkScreenAt(page, "usage");
    // Switching range redraws the chart with that range's day buckets, no hour bar left behind.
    for (const [range, days] of [["7d", 8], ["30d", 31], ["7d", 8]] as const) {
      await page.getByRole("radio", { name: range }).check();
      await page.locator(`[data-testid=usage-totals][data-range="${range}"]`).waitFor();
      const titles = await chart.locator("rect title").allTextContents();
      assert.equal(titles.length, days, `${range}: ${titles.join(" | ")}`);
      assert.equal(titles.filter((t) => t.endsWith(": 3 executions")).length, 1, `${range}: ${titles.join(" | ")}`);
      assert.match((await chart.locator("svg").getAttribute("aria-label"))!, /^Executions per day, /);
    }
  });

  it("runs an agent from the web with the wallet's session and no API key: output, charge, receipt verified in the browser", async () => {
    const payer = await stack.market.payer(5_000_000n);
    const wallet = payer.wallet.publicKey.toBase58();
    const { page } = await dashboardFor(payer);
    await signInWithTestWallet({ page } as DashboardPage);
    await page.getByRole("link", { name: "Marketplace" }).click();
    await page.getByRole("link", { name: "Echo" }).first().waitFor();
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill("count these four words");
    await page.getByLabel("language *").selectOption("en");
    // Money reads to the cent with its unit, the exact amount on hover.
    assert.equal(await page.getByTestId("agent-collateral").textContent(), "100.00 USDC");
    assert.equal(await page.getByTestId("agent-collateral").getAttribute("title"), "100.000000 USDC");
    assert.match((await page.getByTestId("run-max-price").textContent())!, /^At most 0\.25 USDC for this call/);
    assert.equal(await page.getByTestId("run-max-price").getByTitle("0.250000 USDC").count(), 1);
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    await page.getByTestId("run-output").waitFor();
    const output = JSON.parse((await page.getByTestId("run-output").textContent())!) as { words: number };
    assert.equal(output.words, 4);
    assert.equal(await page.getByTestId("charged").textContent(), "0.25 USDC");
    assert.equal(await page.getByTestId("charged").getAttribute("title"), "0.250000 USDC");
    assert.match((await page.getByTestId("run-result").textContent())!, /Charged 0\.25 USDC \(0\.2475 USDC to the creator, 0\.0025 USDC fee\)/);
    await page.getByTestId("receipt-verdict").waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("receipt-verdict").textContent())!, /Receipt verified/);
    // The checks in words and USDC: no library identifiers, no base units.
    await page.getByTestId("receipt-check").getByText("Checks", { exact: true }).click();
    const checks = (await page.getByTestId("receipt-check").locator(".checks").textContent())!;
    assert.doesNotMatch(checks, /\b[a-z0-9]+_[a-z0-9_]+\b|base units/, checks);
    assert.match(checks, /Creator's payout: payout account \w+ gained 0\.2475 USDC/, checks);
    assert.match(checks, /0\.25 USDC charged \(0\.2475 USDC to the creator, 0\.0025 USDC fee\)/, checks);
    await page.screenshot({ path: `${SHOTS}/agent-run.png`, fullPage: true });
    // On a phone the settlement's link stays one token, not broken mid-hash.
    await page.setViewportSize({ width: 390, height: 900 });
    assert.equal(await textLines(page.getByTestId("run-result").getByRole("link", { name: /opens the explorer/ })), 1);
    await checkScreen(page, "agent-run-result");
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.equal(await stack.market.usdc(payer.tokenAccount), 5_000_000n - 250_000n, "charged to the signed-in wallet");

    // No key was made for it, and the browser keeps no credential beyond the tab's session.
    const token = await signIn(stack.relayer, payer.wallet);
    const keys = await api<{ data: { name: string }[] }>(stack.relayer, "GET", "/v1/keys", { token });
    assert.deepEqual(keys.body.data, []);
    const stored = await page.evaluate(() => [...Object.values(localStorage), ...Object.values(sessionStorage)].join("\n"));
    assert.doesNotMatch(stored, /svc_(test|live)_/, "no API key secret in the browser's storage");
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByText("No keys yet").waitFor();

    // The run shows as a web run, from the chain's records.
    await waitFor("the web run in the indexer", async () => {
      const data = await indexed(stack, `query($w: String!) { usage(dimension: PAYER, subject: $w) { totals(window: H24) { settled } } }`, { w: wallet });
      return data.usage.totals.settled === 1;
    });
    await page.getByRole("link", { name: "Executions" }).click();
    await page.getByTestId("execution-paid-with").filter({ hasText: "Web runs (signed in)" }).waitFor();
    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByLabel("Of").selectOption("API_KEY");
    await page.locator("select").filter({ has: page.getByRole("option", { name: "choose a key" }) }).selectOption({ label: "Web runs (signed in)" });
    await page.getByTestId("total-executions").filter({ hasText: /^1$/ }).waitFor();
  });

  it("explains a 402 with its fix", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n, 0n);
    const { page } = await dashboardFor(payer);
    await signInWithTestWallet({ page } as DashboardPage);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill("anything");
    await page.getByLabel("language *").selectOption("fr");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const text = (await alert.textContent())!;
    assert.match(text, /insufficient_allowance/);
    assert.match(text, /Raise the allowance on the Wallet screen/);
    await page.screenshot({ path: `${SHOTS}/402.png`, fullPage: true });
  });

  it("offers the local test wallet on localnet, which signs in and sets the allowance with a transaction it signs", async () => {
    const dashboard = await dashboardFor(null);
    const { page } = dashboard;
    await page.getByRole("button", { name: "Use the local test wallet" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByText("local test wallet", { exact: true }).waitFor();
    const address = (await page.locator("header .who .mono").getAttribute("title"))!;
    const owner = new PublicKey(address);
    await stack.market.connection.confirmTransaction(await stack.market.connection.requestAirdrop(owner, 1_000_000_000), "confirmed");
    await stack.market.localnet.mintUsdc(owner, 5_000_000n);

    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByTestId("balance").filter({ hasText: /^5\.00 USDC$/ }).waitFor();
    await page.getByLabel("Allowance, USDC").fill("3");
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    await page.getByTestId("allowance-sent").waitFor({ timeout: 60_000 });
    await page.getByTestId("allowance").filter({ hasText: /^3\.00 USDC$/ }).waitFor();
    await page.screenshot({ path: `${SHOTS}/wallet-local.png`, fullPage: true });
    const funding = await stack.market.connection.getTokenAccountBalance(tokenAccountOf(stack.market, owner));
    assert.equal(funding.value.amount, "5000000");
  });

  it("has no serious accessibility violations on any screen, at 1280, 390 and 375 px", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const ran = await execute(stack.relayer, payer, agent.address);
    assert.equal(ran.status, 200);
    for (const width of [1280, 390, 375]) {
      const dashboard = await dashboardFor(payer, width);
      const { page } = dashboard;
      const screens: [string, () => Promise<void>][] = [
        ["signin", async () => page.getByRole("button", { name: "Test Wallet", exact: true }).waitFor()],
        ["keys", async () => (await signInWithTestWallet(dashboard), await page.getByTestId("key-row").first().waitFor())],
        ["usage", async () => (await page.getByRole("link", { name: "Usage" }).click(), await page.getByTestId("usage-totals").waitFor())],
        [
          "executions",
          async () => {
            await page.getByRole("link", { name: "Executions" }).click();
            const amount = page.getByTestId("execution-row").first().getByTestId("execution-amount");
            assert.equal(await amount.textContent(), "0.25 USDC");
            assert.equal(await amount.getAttribute("title"), "0.250000 USDC");
          },
        ],
        ["executions-details", async () => (await page.getByRole("button", { name: "Details" }).first().click(), await page.getByTestId("execution-details").waitFor())],
        ["wallet", async () => (await page.getByRole("link", { name: "Wallet", exact: true }).click(), await page.getByTestId("balance").waitFor())],
        ["marketplace", async () => (await page.getByRole("link", { name: "Marketplace" }).click(), await page.getByTestId("agent-card").first().waitFor())],
        ["agent", async () => (await page.getByRole("link", { name: "Echo" }).first().click(), await page.getByTestId("uptime-chart").waitFor())],
      ];
      for (const [name, open] of screens) {
        await open();
        await checkScreen(page, name);
        if (width === 375 && name === "agent") {
          const cut = await page.getByTestId("uptime-windows").evaluate((table) => table.parentElement!.scrollWidth - table.parentElement!.clientWidth);
          assert.ok(cut <= 0, `the window table is cut by ${cut} px at 375 px`);
        }
      }
    }
  });
});
