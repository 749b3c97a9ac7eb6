// The dashboard following the chain by itself (issue 29), on a chain at npm start's slot time: a
// web run's receipt waits for its settlement to be confirmed rather than failing, and the screens
// showing the wallet's executions, usage, balance and an agent's record update from the indexer's
// subscriptions, with no reload or navigation.
import { strict as assert } from "node:assert";

import { execute, listAgent, newPayer, type ListedAgent } from "../../tests/src/marketplace.js";
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
