// The dashboard following the chain by itself (issue 29), on a chain at npm start's slot time: a
// web run's receipt waits for its settlement to be confirmed rather than failing (for 30 s, then
// on request), and the screens showing the wallet's executions, usage, balance and an agent's
// record update from the indexer's subscriptions, with no reload or navigation.
import { strict as assert } from "node:assert";

import { execute, listAgent, newPayer, type ListedAgent } from "@agent-market/tests/marketplace";
import { signInWithTestWallet } from "./browser.js";
import { checkScreen } from "./page-checks.js";
import type { Stack } from "./stack.js";
import { dashboardSuite } from "./suite.js";

/** npm start's slot time. */
const SLOT_MS = 400;
/** How long the page's RPC node lags behind the cluster. */
const LAG_MS = 4_000;

describe("the dashboard following the chain", function () {
  this.timeout(600_000);
  const suite = dashboardSuite({ chain: { slotMs: SLOT_MS } });
  let stack: Stack;
  let agent: ListedAgent;

  before(async () => {
    stack = suite.stack;
    agent = await listAgent(stack.market, stack.relayer);
    suite.defer(() => agent.server.close());
  });

  it("says a web run's settlement is not yet confirmed, then verifies the receipt once it is", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill("count these four words");
    await page.getByLabel("language *").selectOption("en");
    // The RPC node the page reads from lags behind the one the relayer sent to, as behind a load
    // balancer: for LAG_MS from the page's first look it has the settlement processed only. The
    // relayer answers at `processed`, so the page meets exactly this on a busy cluster.
    let firstLookAt: number | null = null;
    await page.route("**/dashboard-rpc", async (route) => {
      const call = route.request().postDataJSON() as { id: number; method: string; params: unknown[] };
      firstLookAt ??= Date.now();
      if (Date.now() >= firstLookAt + LAG_MS) return route.continue();
      if (call.method === "getTransaction") return route.fulfill({ json: { jsonrpc: "2.0", id: call.id, result: null } });
      if (call.method === "getSignatureStatuses") {
        const value = (call.params[0] as string[]).map(() => ({ slot: 0, confirmations: 0, err: null, confirmationStatus: "processed" }));
        return route.fulfill({ json: { jsonrpc: "2.0", id: call.id, result: { context: { slot: 0 }, value } } });
      }
      return route.continue();
    });
    const verdicts: string[] = [];
    await page.exposeFunction("__verdict", (text: string) => verdicts.push(text));
    // Every verdict the page ever shows, not only the last: a "did not verify" on the way fails.
    await page.evaluate(() => {
      new MutationObserver(() => {
        const verdict = document.querySelector('[data-testid="receipt-verdict"]');
        if (verdict) (window as unknown as { __verdict(text: string): void }).__verdict(verdict.textContent ?? "");
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    await page.getByTestId("run-output").waitFor({ timeout: 60_000 });
    await page.getByTestId("receipt-pending").waitFor();
    await page.getByTestId("receipt-verdict").waitFor({ timeout: 60_000 });
    const verdict = (await page.getByTestId("receipt-verdict").textContent())!;
    assert.match(verdict, /Receipt verified/);
    assert.deepEqual(verdicts.filter((text) => /did not verify/.test(text)), []);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "agent-run-confirmed");
    }
  });

  it("stops re-checking a settlement still unconfirmed after 30 s, says it could not be confirmed yet, and checks again on request", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill("count these four words");
    await page.getByLabel("language *").selectOption("en");
    // The page's RPC node never gets past `processed` while `held`: the settlement stays unconfirmed.
    let held = true;
    let statusChecks = 0;
    await page.route("**/dashboard-rpc", async (route) => {
      const call = route.request().postDataJSON() as { id: number; method: string; params: unknown[] };
      if (!held) return route.continue();
      if (call.method === "getTransaction") return route.fulfill({ json: { jsonrpc: "2.0", id: call.id, result: null } });
      if (call.method === "getSignatureStatuses") {
        statusChecks += 1;
        const value = (call.params[0] as string[]).map(() => ({ slot: 0, confirmations: 0, err: null, confirmationStatus: "processed" }));
        return route.fulfill({ json: { jsonrpc: "2.0", id: call.id, result: { context: { slot: 0 }, value } } });
      }
      return route.continue();
    });
    const startedAt = Date.now();
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
    await page.getByTestId("receipt-pending").waitFor({ timeout: 60_000 });
    await page.getByTestId("receipt-unconfirmed").waitFor({ timeout: 60_000 });
    assert.ok(Date.now() - startedAt >= 30_000, "it looked for 30 s before giving up");
    assert.match((await page.getByTestId("receipt-unconfirmed").textContent())!, /^The settlement could not be confirmed on chain yet \(checked for 30 s\), so the receipt cannot be checked yet\. This does not mean it failed/);
    assert.equal(await page.getByTestId("receipt-verdict").count(), 0, "never a verdict on an unconfirmed settlement");
    assert.equal(await page.getByTestId("receipt-pending").count(), 0);
    // Bounded: about one look a second for 30 s, and none once it gave up.
    const looked = statusChecks;
    assert.ok(looked >= 10 && looked <= 32, `status checks in 30 s: ${looked}`);
    await page.waitForTimeout(3_000);
    assert.equal(statusChecks, looked, "no look after giving up");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await checkScreen(page, "agent-run-unconfirmed");
    }
    held = false;
    await page.getByRole("button", { name: "Check again" }).click();
    await page.getByTestId("receipt-verdict").waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("receipt-verdict").textContent())!, /Receipt verified/);
    assert.equal(await page.getByRole("button", { name: "Check again" }).count(), 0);
  });

  it("shows an execution made with curl on Executions, Usage, Wallet and the agent's page without a reload", async () => {
    const payer = await newPayer(stack.market, stack.relayer, 5_000_000n);
    const pages = await Promise.all(["executions", "usage", "wallet", `agents/${agent.address.toBase58()}`].map(() => suite.open(payer.wallet)));
    for (const dashboard of pages) await signInWithTestWallet(dashboard);
    const [executions, usage, wallet, agentPage] = pages.map((d) => d.page);
    await executions!.getByRole("link", { name: "Executions" }).click();
    await executions!.getByText("No executions").waitFor();
    await usage!.getByRole("link", { name: "Usage" }).click();
    await usage!.getByTestId("total-executions").filter({ hasText: /^0$/ }).waitFor();
    await wallet!.getByRole("link", { name: "Wallet", exact: true }).click();
    await wallet!.getByTestId("balance").filter({ hasText: /^5\.00 USDC$/ }).waitFor();
    await agentPage!.goto(`/#/agents/${agent.address.toBase58()}`);
    await agentPage!.getByTestId("uptime-chart").waitFor();
    const rowsBefore = await agentPage!.getByTestId("agent-execution-row").count();

    const ran = await execute(stack.relayer, payer, agent.address);
    assert.equal(ran.status, 200);
    // The indexer records it at `confirmed`; the screens follow within a few slots, untouched.
    const soon = { timeout: 20_000 };
    await executions!.getByTestId("execution-row").first().waitFor(soon);
    await executions!.getByTestId("execution-row").first().getByTestId("agent-name").filter({ hasText: "Echo" }).waitFor();
    await usage!.getByTestId("total-executions").filter({ hasText: /^1$/ }).waitFor(soon);
    await wallet!.getByTestId("balance").filter({ hasText: /^4\.75 USDC$/ }).waitFor(soon);
    await agentPage!.waitForFunction((before) => document.querySelectorAll('[data-testid="agent-execution-row"]').length > before, rowsBefore, soon);
  });
});
