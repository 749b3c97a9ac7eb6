// Disputes from the web, in a real browser against a real relayer, indexer and localnet: the payer
// opens one with a statement and a file, the creator answers, the market's arbiter (a second
// injected wallet, the localnet's development arbiter) rules, and the chain moves exactly that.
import { strict as assert } from "node:assert";

import { collateralVaultPda, fetchDisputesOfExecution, parseExecutionId, toHex, evidenceHash, attachmentDigest } from "@agent-market/program";
import type { Keypair } from "@solana/web3.js";

import { execute, listAgent, newPayer, type ListedAgent, type Payer } from "@agent-market/tests/marketplace";
import { signInWithTestWallet, type DashboardPage } from "./browser.js";
import { checkScreen, checkScreenAt, textLines } from "./page-checks.js";
import { waitFor, type Stack } from "./stack.js";
import { dashboardSuite } from "./suite.js";

const STATEMENT = "The summary came back in French; I asked for English.";
const ATTACHMENT = { name: "output.txt", mimeType: "text/plain", buffer: Buffer.from("Résumé : …\n") };

describe("disputes in the dashboard", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();
  let stack: Stack;
  const agents: ListedAgent[] = [];

  before(() => {
    stack = suite.stack;
    suite.defer(() => Promise.all(agents.map((a) => a.server.close())));
  });

  async function signedIn(wallet: Keypair, width = 1280): Promise<DashboardPage> {
    const dashboard = await suite.open(wallet, width);
    await signInWithTestWallet(dashboard);
    return dashboard;
  }

  /** A settled execution of a new agent (its own collateral) paid by a new payer, as the indexer lists it. */
  async function settledExecution(): Promise<{ agent: ListedAgent; payer: Payer; id: string }> {
    const agent = await listAgent(stack.market, stack.relayer);
    agents.push(agent);
    const payer = await newPayer(stack.market, stack.relayer, 10_000_000n);
    const ran = await execute(stack.relayer, payer, agent.address);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    const id = (ran.body as { id: string }).id;
    await waitFor("the execution, settled, in the indexer", async () => {
      const response = await fetch(stack.graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `query($w: String!) { usage(dimension: PAYER, subject: $w) { totals(window: H24) { settled } } }`, variables: { w: payer.wallet.publicKey.toBase58() } }),
      });
      const body = (await response.json()) as { data: { usage: { totals: { settled: number } } } };
      return body.data.usage.totals.settled === 1;
    });
    return { agent, payer, id };
  }

  /** The payer opens the dispute from the execution's details. */
  async function openFromExecutions(dashboard: DashboardPage, withFile: boolean): Promise<void> {
    const { page } = dashboard;
    await page.getByRole("link", { name: "Executions" }).click();
    await page.getByRole("button", { name: "Details" }).first().click();
    // The settlement finalizes (the open screen follows the chain) before the dispute opens.
    const finality = page.getByTestId("execution-finality");
    await finality.filter({ hasText: /^finalized$/ }).waitFor({ timeout: 60_000 });
    await page.getByTestId("countdown").waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("countdown").textContent())!, /^2d 23h 5\dm \d+s left/, "the localnet's 3-day window, just begun");
    await page.getByLabel("Statement").fill(STATEMENT);
    if (withFile) await page.getByLabel(/^Attachments/).setInputFiles(ATTACHMENT);
    await checkScreen(page, "dispute-form");
    await page.getByRole("button", { name: "Sign and open the dispute" }).click();
    await page.getByTestId("dispute-opened").waitFor({ timeout: 60_000 });
    await page.getByTestId("dispute-state").filter({ hasText: "open: waiting for the arbiter" }).waitFor();
    // The dispute is a fact of its own: the settlement it disputes stays finalized.
    await page.getByTestId("execution-dispute").filter({ hasText: /^open, / }).waitFor({ timeout: 30_000 });
    assert.equal(await finality.textContent(), "finalized");
    await checkScreenAt(page, "execution-disputed");
  }

  const balance = (address: Parameters<Stack["market"]["usdc"]>[0]) => stack.market.usdc(address);

  it("payer opens a dispute with a file, the creator answers, the arbiter upholds it: the slash moves exactly", async () => {
    const { agent, payer, id } = await settledExecution();
    const executionId = parseExecutionId(id)!;
    const payerPage = await signedIn(payer.wallet);

    // An empty statement is refused before anything is kept.
    await payerPage.page.getByRole("link", { name: "Executions" }).click();
    await payerPage.page.getByRole("button", { name: "Details" }).first().click();
    await payerPage.page.getByRole("button", { name: "Sign and open the dispute" }).click();
    assert.equal(await payerPage.page.getByRole("alert").textContent(), "Write a statement: what went wrong, and what you expected.");
    await payerPage.page.getByRole("button", { name: "Hide" }).click();

    await openFromExecutions(payerPage, true);
    await checkScreen(payerPage.page, "dispute-opened");
    // The dispute of the execution's leaf, found on chain by its execution id.
    const disputesOf = (bytes: Uint8Array) => fetchDisputesOfExecution(stack.market.connection, bytes, { programId: stack.market.programId });
    const [found] = await disputesOf(executionId);
    assert.ok(found, "open_dispute created the dispute account");
    const onChain = found.dispute;
    const expected = evidenceHash(STATEMENT, [attachmentDigest(ATTACHMENT.name, ATTACHMENT.mimeType, ATTACHMENT.buffer)]);
    assert.equal(toHex(onChain.evidenceHash), toHex(expected), "the wallet bound the hash of the statement and file");
    assert.ok(onChain.payer.equals(payer.wallet.publicKey));

    // The creator sees it on its agent and answers.
    const creatorPage = await signedIn(agent.creator.wallet);
    await creatorPage.page.getByRole("link", { name: "Disputes" }).click();
    const onMine = creatorPage.page.getByTestId("dispute-creator");
    await onMine.getByText(STATEMENT).waitFor();
    // The creator is asked for its own side, not for the payer's complaint; the agent is named.
    await onMine.getByRole("button", { name: "Send the answer" }).click();
    await onMine.getByText("Write your answer: what the agent was asked, and why its result stands.").waitFor();
    await onMine.getByTestId("agent-name").filter({ hasText: "Echo" }).first().waitFor();
    await onMine.getByLabel("Your answer").fill("The task asked for French in its parameters.");
    await onMine.getByRole("button", { name: "Send the answer" }).click();
    await onMine.getByTestId("evidence-creator").getByText("The task asked for French in its parameters.").waitFor();
    assert.equal(await onMine.getByLabel("Your answer").inputValue(), "", "the form clears once the answer is kept");
    // What was paid, to the cent with its unit, the exact six places on hover.
    assert.equal(await onMine.getByTestId("dispute-paid").textContent(), "0.25 USDC");
    assert.equal(await onMine.getByTestId("dispute-paid").getAttribute("title"), "0.250000 USDC");
    await checkScreenAt(creatorPage.page, "disputes-creator");

    // A wallet that is not the arbiter is not offered the screen; reaching it by address, it is told why it cannot rule.
    assert.equal(await payerPage.page.getByRole("link", { name: "Arbiter" }).count(), 0);
    await payerPage.page.goto("/#/arbiter");
    await payerPage.page.getByTestId("not-arbiter").waitFor();
    assert.match((await payerPage.page.getByTestId("not-arbiter").textContent())!, new RegExp(`Only the market's arbiter, ${stack.market.arbiter.publicKey.toBase58()}, signs resolve_dispute`));
    assert.equal(await payerPage.page.getByRole("button", { name: /^Sign: / }).count(), 0);
    await checkScreen(payerPage.page, "arbiter-not-arbiter");

    const arbiterPage = await signedIn(stack.market.arbiter);
    await arbiterPage.page.getByRole("link", { name: "Arbiter" }).click();
    const item = arbiterPage.page.getByTestId("arbiter-dispute").filter({ hasText: id });
    await item.getByTestId("evidence-payer").getByRole("link", { name: "output.txt" }).waitFor();
    await item.getByTestId("evidence-creator").waitFor();
    assert.equal(await item.getByTestId("dispute-paid").textContent(), "0.25 USDC");
    await checkScreenAt(arbiterPage.page, "arbiter");
    await item.getByRole("button", { name: "Sign: uphold and slash" }).click();
    assert.equal(await item.getByRole("alert").textContent(), "Give the slash in USDC, e.g. 2.5 (up to 6 decimals).");
    await item.getByLabel("Slash, USDC").fill("0");
    await item.getByRole("button", { name: "Sign: uphold and slash" }).click();
    assert.equal(await item.getByRole("alert").textContent(), "To uphold, slash more than 0 USDC.");

    const vault = collateralVaultPda(agent.address, stack.market.programId);
    const [vaultBefore, payerBefore] = [await balance(vault), await balance(payer.tokenAccount)];
    await item.getByLabel("Slash, USDC").fill("2.5");
    await item.getByRole("button", { name: "Sign: uphold and slash" }).click();
    await item.getByTestId("resolved").waitFor({ timeout: 60_000 });
    assert.match((await item.getByTestId("resolved").textContent())!, /^Upheld: 2\.50 USDC left the agent's collateral, 2\.50 USDC reached the payer\./);
    assert.equal(await item.getByTestId("resolved").getByTitle("2.500000 USDC").count(), 2);
    assert.equal(await balance(vault), vaultBefore - 2_500_000n, "exactly the slash left the collateral vault");
    assert.equal(await balance(payer.tokenAccount), payerBefore + 2_500_000n, "and reached the payer's token account");
    assert.deepEqual((await disputesOf(executionId)).map((d) => [d.dispute.resolved, d.dispute.upheld]), [[true, true]], "resolved, the dispute stays until closed");
    await item.getByTestId("dispute-state").filter({ hasText: "upheld" }).waitFor();

    // Both sides see the outcome.
    for (const side of [payerPage, creatorPage]) {
      await side.page.getByRole("link", { name: "Executions" }).click();
      await side.page.getByRole("link", { name: "Disputes" }).click();
      const entry = side.page.getByTestId(side === payerPage ? "dispute-payer" : "dispute-creator").filter({ hasText: id });
      await entry.getByTestId("dispute-state").filter({ hasText: "upheld" }).waitFor();
      assert.equal(await entry.getByTestId("dispute-slashed").textContent(), "2.50 USDC");
      assert.equal(await entry.getByTestId("dispute-slashed").getAttribute("title"), "2.500000 USDC");
    }
    await checkScreenAt(payerPage.page, "disputes-payer");
  });

  it("a rejected dispute moves nothing, and both sides see it rejected", async () => {
    const { agent, payer, id } = await settledExecution();
    const payerPage = await signedIn(payer.wallet, 375);
    await openFromExecutions(payerPage, false);
    const vault = collateralVaultPda(agent.address, stack.market.programId);
    const [vaultBefore, payerBefore] = [await balance(vault), await balance(payer.tokenAccount)];

    const arbiterPage = await signedIn(stack.market.arbiter, 375);
    await arbiterPage.page.getByRole("link", { name: "Arbiter" }).click();
    const item = arbiterPage.page.getByTestId("arbiter-dispute").filter({ hasText: id });
    await item.getByText(STATEMENT).waitFor();
    await item.getByLabel("Reject").check();
    await checkScreenAt(arbiterPage.page, "arbiter-reject");
    await item.getByRole("button", { name: "Sign: reject" }).click();
    await item.getByTestId("resolved").waitFor({ timeout: 60_000 });
    assert.match((await item.getByTestId("resolved").textContent())!, /^Rejected: nothing moved; the agent keeps its collateral and the payer's charge stands\./);
    // The arbiter's badge and eleven links leave the brand on one line at 1280 px.
    await arbiterPage.page.setViewportSize({ width: 1280, height: 900 });
    assert.equal(await textLines(arbiterPage.page.locator(".brand")), 1);
    await arbiterPage.page.setViewportSize({ width: 375, height: 900 });
    assert.equal(await balance(vault), vaultBefore);
    assert.equal(await balance(payer.tokenAccount), payerBefore);
    assert.deepEqual(
      (await fetchDisputesOfExecution(stack.market.connection, parseExecutionId(id)!, { programId: stack.market.programId })).map((d) => [d.dispute.resolved, d.dispute.upheld]),
      [[true, false]],
      "resolved, the dispute stays until closed",
    );

    await payerPage.page.getByRole("link", { name: "Disputes" }).click();
    const entry = payerPage.page.getByTestId("dispute-payer").filter({ hasText: id });
    await entry.getByTestId("dispute-state").filter({ hasText: "rejected" }).waitFor();
    await checkScreen(payerPage.page, "disputes-payer");
    // The execution's details show the outcome instead of the form.
    await payerPage.page.getByRole("link", { name: "Executions" }).click();
    await payerPage.page.getByRole("button", { name: "Details" }).first().click();
    await payerPage.page.getByTestId("execution-details").getByTestId("dispute-state").filter({ hasText: "rejected" }).waitFor();
    assert.equal(await payerPage.page.getByRole("button", { name: "Sign and open the dispute" }).count(), 0);
    await checkScreen(payerPage.page, "execution-disputed");
  });
});
