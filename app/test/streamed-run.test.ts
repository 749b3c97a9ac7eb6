// A web run of a creator that streams, in a real browser against a real relayer and localnet: the
// output shows as it arrives (before the run is final), then the charge and the verified receipt;
// a streamed answer that is refunded leaves what arrived on the page, marked as not charged.
import { strict as assert } from "node:assert";

import { listAgent, type ListedAgent } from "@agent-market/tests/marketplace";
import { signInWithTestWallet, type DashboardPage } from "./browser.js";
import { SHOTS } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

describe("a streamed web run in the dashboard", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();
  let agent: ListedAgent;

  before(async () => {
    agent = await listAgent(suite.stack.market, suite.stack.relayer, { behaviour: "stream", maxExecutionSecs: 20 });
    // Slow enough that the page shows some chunks long before the last.
    agent.server.chunk_delay_ms = 400;
    suite.defer(() => agent.server.close());
  });

  async function run(page: DashboardPage["page"], task: string): Promise<void> {
    await page.goto(`/#/agents/${agent.address.toBase58()}`);
    await page.getByLabel("Task").fill(task);
    await page.getByLabel("language *").selectOption("en");
    await page.getByRole("button", { name: "Run and pay from my wallet" }).click();
  }

  it("shows the output as it arrives, in a live region, then the charge and the verified receipt", async () => {
    const { market } = suite.stack;
    const payer = await market.payer(5_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    const task = "stream these few words to the page slowly";
    await run(page, task);

    const live = page.getByTestId("run-stream");
    await live.filter({ hasText: /\S/ }).waitFor();
    assert.equal(await live.getAttribute("aria-live"), "polite");
    const partial = (await live.textContent())!;
    assert.equal(await page.getByTestId("run-output").count(), 0, "the run is not final yet");
    const whole = JSON.stringify({ echoed: task, words: 8 });
    assert.ok(whole.startsWith(partial) && partial.length < whole.length, `${JSON.stringify(partial)} is a beginning of the output`);
    await page.screenshot({ path: `${SHOTS}/streamed-run-arriving.png`, fullPage: true });

    await page.getByTestId("run-output").waitFor({ timeout: 60_000 });
    assert.equal(await live.count(), 0, "the final output replaces the streamed text");
    assert.deepEqual(JSON.parse((await page.getByTestId("run-output").textContent())!), { echoed: task, words: 8 });
    assert.equal(await page.getByTestId("charged").textContent(), "0.25 USDC");
    await page.getByTestId("receipt-verdict").waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("receipt-verdict").textContent())!, /Receipt verified/);
    await page.screenshot({ path: `${SHOTS}/streamed-run-receipt.png`, fullPage: true });
    assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n - 250_000n);
  });

  it("keeps what arrived of a refunded stream, marked as not charged, with the refund's reason", async () => {
    const { market } = suite.stack;
    agent.server.behaviour = "stream_invalid_output";
    try {
      const payer = await market.payer(5_000_000n);
      const dashboard = await suite.open(payer.wallet);
      const { page } = dashboard;
      await signInWithTestWallet(dashboard);
      await run(page, "an output the schema refuses");
      await page.getByRole("alert").filter({ hasText: "invalid_result" }).waitFor({ timeout: 60_000 });
      await page.getByRole("heading", { name: "Output received before the refund (not charged)" }).waitFor();
      assert.match((await page.getByTestId("run-stream").textContent())!, /^\{"echoed":42/);
      assert.equal(await page.getByTestId("run-output").count(), 0);
      assert.equal(await market.usdc(payer.tokenAccount), 5_000_000n, "refunded");
    } finally {
      agent.server.behaviour = "stream";
    }
  });
});
