// The dashboard as a newcomer meets it on `npm start` (issue 29): a fresh local test wallet funded
// in one click, a wallet without SOL told what to do before anything is signed, the chain's other
// refusals in the app's words, a session that survives a reload and a new tab, a 402 in the app's
// words, and the app's files served compressed.
import { strict as assert } from "node:assert";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";

import { Keypair, PublicKey } from "@solana/web3.js";

import { execute, listAgent, newPayer, tokenAccountOf, type ListedAgent } from "@agent-market/tests/marketplace";
import { api } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreen, checkScreenAt, SHOTS } from "./page-checks.js";
import type { Stack } from "./stack.js";
import { dashboardSuite } from "./suite.js";

/** A raw GET, so that the answer's encoding is seen as sent (fetch decodes it). */
function rawGet(url: string, acceptEncoding: string | null): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: acceptEncoding === null ? {} : { "accept-encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the dashboard for a newcomer", function () {
  this.timeout(300_000);
  // Chromium logs every 4xx answer as a console error: the 402 the page explains is under test.
  // An unreachable relayer is emulated by refusing the page's request, which Chromium logs too. The
  // relayer's 400 to an empty allowance field from a wallet without keys is under test as well.
  const suite = dashboardSuite({
    expectedError: (error) =>
      error.includes("the server responded with a status of 402") || error.includes("the server responded with a status of 400") || error.includes("net::ERR_CONNECTION_REFUSED"),
  });
  let stack: Stack;
  let agent: ListedAgent;

  before(async () => {
    stack = suite.stack;
    agent = await listAgent(stack.market, stack.relayer);
    suite.defer(() => agent.server.close());
  });

  it("calls an agent without executions new, not 'no data'", async () => {
    const dashboard = await suite.open(Keypair.generate());
    await signInWithTestWallet(dashboard);
    await dashboard.page.getByRole("link", { name: "Marketplace" }).click();
    await dashboard.page.getByTestId("agent-card").filter({ hasText: "Echo" }).getByText("new: no executions yet").waitFor();
    assert.equal(await dashboard.page.getByText("no data", { exact: true }).count(), 0);
  });

  it("funds a fresh local test wallet in one click through the relayer, which then pays with an API key", async () => {
    const dashboard = await suite.open(null);
    const { page } = dashboard;
    await page.getByRole("button", { name: "Use the local test wallet" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    const owner = new PublicKey((await page.locator("header .who .mono").getAttribute("title"))!);
    // An empty wallet's first screen says what comes first, and links to where it is done.
    const fundFirst = page.getByTestId("fund-first");
    await fundFirst.waitFor();
    assert.match((await fundFirst.textContent())!, /Next step: fund your wallet\. It holds no USDC yet/);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "keys-unfunded");
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await fundFirst.getByRole("link", { name: "Fund it on the Wallet screen" }).click();
    await page.getByTestId("no-sol").waitFor();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "wallet-empty");
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    // Listing's checklist: a wallet short of the minimum collateral is pointed to the faucet.
    await page.getByRole("navigation").getByRole("link", { name: "List an agent" }).click();
    const fund = page.getByTestId("fund-collateral");
    assert.equal(await fund.textContent(), "Fund it with test USDC on the Wallet screen (one click)");
    await checkScreenAt(page, "list-agent-unfunded");
    await fund.click();

    await page.getByRole("button", { name: "Fund with test SOL and USDC" }).click();
    await page.getByTestId("funded").waitFor({ timeout: 60_000 });
    // Enough to lock the minimum collateral (100 USDC) and still pay for runs.
    await page.getByTestId("balance").filter({ hasText: /^1000\.00 USDC$/ }).waitFor();
    await page.getByTestId("sol-balance").filter({ hasText: /^2 SOL$/ }).waitFor();
    assert.equal(await page.getByTestId("no-sol").count(), 0);
    assert.equal(await stack.market.usdc(tokenAccountOf(stack.market, owner)), 1_000_000_000n);
    assert.equal(await stack.market.connection.getBalance(owner, "confirmed"), 2_000_000_000);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "wallet-funded");
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    // Asking again tops up to the same amounts: a thousand clicks are worth one.
    await page.getByRole("button", { name: "Fund with test SOL and USDC" }).click();
    await page.getByTestId("funded").waitFor();
    assert.equal(await stack.market.usdc(tokenAccountOf(stack.market, owner)), 1_000_000_000n);
    assert.equal(await stack.market.connection.getBalance(owner, "confirmed"), 2_000_000_000);

    // The allowance field speaks for itself, beside it: a wallet without keys is asked for an
    // amount when the field is left empty, "abc" is refused in words (no browser popup), and more
    // than the balance is warned about but allowed.
    const allowance = page.getByLabel("Allowance, USDC");
    await page.getByTestId("allowance-hint").filter({ hasText: /^Enter an amount: runs from the Marketplace draw on it/ }).waitFor();
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    const problem = page.getByTestId("allowance-problem");
    await problem.waitFor();
    // Said by the page, which has read the wallet's keys: nothing was asked of the relayer.
    assert.equal(await problem.textContent(), "Enter an amount: this wallet has no API key, so there are no spending caps for an empty field to add up.");
    assert.equal(await page.getByRole("alert").count(), 0, "no second banner");
    await allowance.fill("abc");
    assert.equal(await problem.count(), 0, "typing clears the message");
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    assert.equal(await problem.textContent(), "Enter an amount in USDC with digits only, such as 5 or 2.50 (at most 6 decimals).");
    assert.equal(await allowance.getAttribute("aria-invalid"), "true");
    assert.equal(await allowance.evaluate((input) => (input as HTMLInputElement).validationMessage), "", "no browser validation");
    await allowance.fill("5000");
    assert.equal(
      await page.getByTestId("allowance-above-balance").textContent(),
      "More than the 1000.00 USDC the wallet holds: the allowance is set all the same, but a call is refused once it costs more than the balance.",
    );
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "wallet-allowance-above-balance");
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    // The funded wallet sets an allowance, and a key it generates pays for an execution over HTTP.
    await allowance.fill("5");
    assert.equal(await page.getByTestId("allowance-above-balance").count(), 0);
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    await page.getByTestId("allowance-sent").waitFor({ timeout: 60_000 });
    await page.getByTestId("allowance").filter({ hasText: /^5\.00 USDC$/ }).waitFor();
    const token = await page.evaluate(() => (JSON.parse(localStorage.getItem("agent-market.session")!) as { token: string }).token);
    const key = await api<{ secret: string }>(stack.relayer, "POST", "/v1/keys", { token, body: { name: "curl", environment: "test" } });
    assert.equal(key.status, 201);
    const ran = await execute(stack.relayer, { apiKey: key.body.secret }, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
  });

  it("funds only the signed-in wallet: a call without a session or with an API key moves nothing", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 1_000_000n);
    const before = await stack.market.usdc(payer.tokenAccount);
    const lamports = await stack.market.connection.getBalance(payer.wallet.publicKey, "confirmed");
    const anonymous = await api<{ error: { code: string } }>(stack.relayer, "POST", "/dashboard-faucet", {});
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, "session_required");
    const withKey = await api<{ error: { code: string } }>(stack.relayer, "POST", "/dashboard-faucet", { token: payer.apiKey });
    assert.equal(withKey.status, 403);
    assert.equal(withKey.body.error.code, "api_key_not_allowed");
    assert.equal(await stack.market.usdc(payer.tokenAccount), before, "no USDC moved");
    assert.equal(await stack.market.connection.getBalance(payer.wallet.publicKey, "confirmed"), lamports, "no SOL moved");
  });

  it("tells a wallet without SOL what to do before signing, and shows no raw chain text", async () => {
    const empty = Keypair.generate();
    const dashboard = await suite.open(empty);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByTestId("balance").waitFor();
    await page.getByLabel("Allowance, USDC").fill("3");
    await page.getByRole("button", { name: "Sign and set the allowance" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const text = (await alert.textContent())!;
    assert.match(text, /needs SOL for the network fee/);
    assert.match(text, /Fund the wallet with test SOL and USDC/);
    assert.equal(await alert.getByRole("link", { name: "Open the Wallet screen" }).getAttribute("href"), "#/wallet");
    const whole = (await page.locator("body").textContent())!;
    assert.doesNotMatch(whole, /simulation failed|prior credit|custom program error|JSON-RPC/i);
    assert.equal(await page.getByTestId("allowance-sent").count(), 0);
    assert.equal(await stack.market.connection.getBalance(empty.publicKey, "confirmed"), 0, "nothing was sent");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "wallet-no-sol");
    }
  });

  it("says the chain's other refusals in its own words: a simulation failure with logs, an expired blockhash, an unreachable RPC", async () => {
    const payer = await stack.market.payer(5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByTestId("balance").waitFor();
    // The page's RPC answers the wallet's transaction as a node would; everything else passes.
    type Answer = ((id: number) => unknown) | "unreachable";
    let answer: Answer = () => null;
    await page.route("**/dashboard-rpc", async (route) => {
      const call = route.request().postDataJSON() as { id: number; method: string };
      if (call.method !== "sendTransaction") return route.continue();
      const current: Answer = answer;
      if (current === "unreachable") return route.abort("connectionrefused");
      return route.fulfill({ json: current(call.id) });
    });
    const rpcError = (message: string, logs: string[] = []) => (id: number) => ({ jsonrpc: "2.0", id, error: { code: -32002, message, data: { logs, err: null } } });
    const cases: [Answer, string, string][] = [
      [
        rpcError("Transaction simulation failed: Error processing Instruction 0: custom program error: 0x4", [
          "Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [1]",
          "Program log: Error: owner does not match",
        ]),
        "The chain refused",
        "The chain refused the transaction: it did not take effect.",
      ],
      [rpcError("Transaction simulation failed: Blockhash not found"), "The transaction expired", "The transaction expired before the chain accepted it; nothing was taken."],
      ["unreachable", "The chain could not be reached", "The chain's RPC did not answer: it may be stopped or busy, or this computer is offline. Nothing was sent."],
    ];
    for (const [rpcAnswer, title, detail] of cases) {
      answer = rpcAnswer;
      await page.getByLabel("Allowance, USDC").fill("3");
      await page.getByRole("button", { name: "Sign and set the allowance" }).click();
      const alert = page.getByRole("alert").filter({ hasText: title });
      await alert.waitFor();
      assert.equal(await alert.locator("p").first().textContent(), detail);
      const whole = (await page.locator("body").textContent())!;
      assert.doesNotMatch(whole, /simulation failed|custom program error|0x4|Program log|owner does not match|Blockhash not found|Failed to fetch|JSON-RPC/i, title);
      assert.equal(await page.getByTestId("allowance-sent").count(), 0);
    }
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "wallet-rpc-unreachable");
    }
    // Nothing reached the chain: the allowance is as it was.
    assert.equal(await page.getByTestId("allowance").textContent(), "5.00 USDC");
  });

  it("keeps the session across a reload and in a new tab until signing out", async () => {
    const dashboard = await suite.open(null);
    const { page, context } = dashboard;
    await page.getByRole("button", { name: "Use the local test wallet" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    const address = await page.locator("header .who .mono").getAttribute("title");
    await page.goto("/#/usage");
    await page.reload();
    await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
    assert.equal(await page.locator("header .who .mono").getAttribute("title"), address);

    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on("console", (message) => message.type() === "error" && errors.push(message.text()));
    await tab.goto("/#/wallet");
    await tab.getByRole("heading", { name: "Wallet", level: 1 }).waitFor();
    assert.equal(await tab.locator("header .who .mono").getAttribute("title"), address);

    // Signing out in one tab signs out the other.
    await tab.getByRole("button", { name: "Sign out" }).click();
    await tab.getByRole("button", { name: "Use the local test wallet" }).waitFor();
    await page.getByRole("button", { name: "Use the local test wallet" }).waitFor();
    await page.reload();
    await page.getByRole("button", { name: "Use the local test wallet" }).waitFor();
    assert.deepEqual(errors, []);

    // A browser wallet is connected again silently on reload.
    const payer = await newPayer(stack.market, stack.relayer, 1_000_000n);
    const injected = await suite.open(payer.wallet);
    await signInWithTestWallet(injected);
    await injected.page.reload();
    await injected.page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    assert.equal(await injected.page.locator("header .who .mono").getAttribute("title"), payer.wallet.publicKey.toBase58());
  });

  it("keeps keyboard focus where the user is: skip link first, Copy key, back to the list, a revoke asked and cancelled with Escape", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 1_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    const focused = () => page.evaluate(() => (document.activeElement?.textContent ?? "").trim());
    await page.keyboard.press("Tab");
    assert.equal(await focused(), "Skip to content");
    await page.keyboard.press("Tab");
    assert.equal(await focused(), "API keys");

    await page.getByLabel("Name").fill("keyboard");
    await page.getByLabel("Name").press("Enter");
    await page.getByTestId("new-key-secret").waitFor();
    assert.equal(await focused(), "Copy key", "the key's Copy button takes focus");
    await page.getByRole("button", { name: "I have stored it" }).press("Enter");
    await page.waitForFunction(() => document.activeElement?.id === "keys-title");

    const row = page.getByTestId("key-row").filter({ hasText: "keyboard" });
    await page.getByRole("button", { name: "Revoke keyboard" }).press("Enter");
    assert.equal(await focused(), "Cancel", "asking keeps focus in the row, on the safe choice");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => document.activeElement?.getAttribute("aria-label") === "Revoke keyboard");
    await page.getByRole("button", { name: "Revoke keyboard" }).press("Enter");
    await page.getByRole("button", { name: "Revoke “keyboard” now" }).press("Enter");
    await row.getByText("revoked").waitFor();
    assert.equal(await focused(), "revoked", "focus lands on the row's new status");

    // Revoking the allowance asks first too; Escape cancels and nothing is signed.
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    await page.getByTestId("allowance").filter({ hasText: /^1\.00 USDC$/ }).waitFor();
    await page.getByRole("button", { name: "Revoke the allowance" }).click();
    await page.getByRole("group", { name: "Confirm revoking the allowance" }).waitFor();
    assert.equal(await focused(), "Cancel");
    await page.keyboard.press("Escape");
    assert.equal(await page.getByRole("group", { name: "Confirm revoking the allowance" }).count(), 0);
    assert.equal(await page.getByTestId("allowance-sent").count(), 0);
  });

  it("groups the navigation by role in one row at 1280 px, the arbiter's screen for the arbiter alone, who can be tried on localnet", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 1_000_000n);
    const consumer = await suite.open(payer.wallet);
    await signInWithTestWallet(consumer);
    const nav = consumer.page.getByRole("navigation", { name: "Dashboard" });
    for (const group of ["Use agents", "Sell agents"]) await nav.getByRole("list", { name: group }).waitFor();
    assert.equal(await nav.getByRole("link", { name: "Arbiter" }).count(), 0, "not the arbiter: no Arbiter screen offered");
    const rows = await consumer.page.evaluate(() => {
      const tops = [".brand", ".top nav", ".who"].map((selector) => document.querySelector(selector)!.getBoundingClientRect());
      return { spread: Math.max(...tops.map((r) => r.top)) - Math.min(...tops.map((r) => r.top)), height: document.querySelector(".top")!.getBoundingClientRect().height };
    });
    assert.ok(rows.height < 70 && rows.spread < 20, `the header is ${rows.height} px high, its parts ${rows.spread} px apart: more than one row at 1280 px`);
    for (const width of [1280, 390]) {
      await consumer.page.setViewportSize({ width, height: 900 });
      await checkScreen(consumer.page, "nav-consumer");
    }

    const arbiter = await suite.open(null);
    await arbiter.page.getByRole("button", { name: "Sign in as the development arbiter" }).click();
    await arbiter.page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    assert.equal(await arbiter.page.locator("header .who .mono").getAttribute("title"), stack.market.arbiter.publicKey.toBase58());
    const arbiterNav = arbiter.page.getByRole("navigation", { name: "Dashboard" });
    await arbiterNav.getByRole("list", { name: "Arbitrate" }).getByRole("link", { name: "Arbiter" }).click();
    await arbiter.page.getByRole("heading", { name: "Arbiter", level: 1 }).waitFor();
    await arbiter.page.getByText("No open dispute").or(arbiter.page.getByTestId("arbiter-dispute").first()).first().waitFor();
    assert.equal(await arbiter.page.getByTestId("not-arbiter").count(), 0);
    await arbiter.page.reload();
    await arbiter.page.getByRole("heading", { name: "Arbiter", level: 1 }).waitFor();
    assert.equal(await arbiter.page.locator("header .who .mono").getAttribute("title"), stack.market.arbiter.publicKey.toBase58());
    await checkScreen(arbiter.page, "nav-arbiter");
  });

  it("has a listing form whose placeholders read as hints, not values, and a full-width endpoint field", async () => {
    const creator = await newPayer(stack.market, stack.relayer, 1_000_000n);
    const dashboard = await suite.open(creator.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "List an agent" }).click();
    await page.getByRole("heading", { name: "Your agent" }).waitFor();
    assert.equal(await page.getByLabel("Price per call, USDC").getAttribute("placeholder"), "at least 0.01");
    const collateral = page.getByLabel("Collateral, USDC (at least 100.00)");
    assert.equal(await collateral.getAttribute("placeholder"), "the minimum if empty");
    const [shown, room] = await collateral.evaluate((input: HTMLInputElement) => {
      const probe = document.createElement("span");
      probe.style.font = getComputedStyle(input).font;
      probe.textContent = input.placeholder;
      document.body.append(probe);
      const width = probe.getBoundingClientRect().width;
      probe.remove();
      return [width, input.clientWidth];
    });
    assert.ok(shown < room, `the collateral's placeholder is cut: ${shown} px in ${room} px`);
    const endpoint = await page.getByText("Endpoint (your service's base URL)").boundingBox();
    const description = await page.getByLabel("Description").boundingBox();
    assert.ok(endpoint!.width >= description!.width - 1, "the endpoint field spans the form");
    assert.ok(endpoint!.height < 80, "its label on one line");
    // What registering costs in SOL, the receipt log's rent included, before anything is signed.
    await page.getByTestId("checklist").getByText(/the rent of the agent account, its two USDC vaults\s+and its receipt log/).waitFor();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "list-agent-form");
    }
  });

  it("says an unreachable relayer could not be reached, and gives times with their time zone", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 1_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    const created = (await page.getByTestId("key-row").first().locator('td[data-label="Created"]').textContent())!;
    assert.match(created, /(UTC|GMT)/, `a time without its zone: ${created}`);
    await page.route("**/v1/wallet/funding*", (route) => route.abort("connectionrefused"));
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    const alert = page.getByRole("alert").first();
    await alert.waitFor();
    const text = (await alert.textContent())!;
    assert.match(text, /could not be reached/);
    assert.doesNotMatch(text, /refused/);
  });

  it("says an allowance 402 in the app's words, with a link to the Wallet screen", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n, 0n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill("anything");
    await page.getByLabel("language *").selectOption("fr");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const text = (await alert.textContent())!;
    assert.doesNotMatch(text, /POST \/v1/);
    assert.match(text, /has not allowed the marketplace/);
    await alert.getByRole("link", { name: "Open the Wallet screen" }).click();
    await page.getByRole("heading", { name: "Wallet", level: 1 }).waitFor();
    await page.screenshot({ path: `${SHOTS}/402-app-words.png`, fullPage: true });
  });

  it("serves its JavaScript compressed, hashed assets cached for a year", async () => {
    const html = await (await fetch(`${stack.relayer.url}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, "index.html names its script");
    const plain = await rawGet(`${stack.relayer.url}${script}`, null);
    assert.equal(plain.headers["content-encoding"], undefined);
    const br = await rawGet(`${stack.relayer.url}${script}`, "gzip, deflate, br");
    assert.equal(br.headers["content-encoding"], "br");
    assert.equal(br.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(br.headers["vary"], "Accept-Encoding");
    assert.ok(brotliDecompressSync(br.body).equals(plain.body));
    assert.ok(br.body.length < plain.body.length / 3, `${br.body.length} bytes compressed of ${plain.body.length}`);
    const gz = await rawGet(`${stack.relayer.url}${script}`, "gzip");
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.ok(gunzipSync(gz.body).equals(plain.body));
    const page = await rawGet(`${stack.relayer.url}/`, "br");
    assert.equal(page.headers["content-encoding"], "br");
    assert.equal(page.headers["cache-control"], "no-cache");
  });
});
