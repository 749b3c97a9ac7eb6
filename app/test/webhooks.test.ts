// The Webhooks screen in a real browser against a real relayer: an endpoint added with its secret
// shown once, a test event that reaches a receiver (checked with verifyWebhook), the delivery
// followed live from pending to succeeded (no Refresh), the endpoint deleted once confirmed;
// axe-clean at a phone's and a desktop's width.
import { strict as assert } from "node:assert";
import http from "node:http";
import type { AddressInfo } from "node:net";

import { verifyWebhook } from "@agent-market/client";

import { signInWithTestWallet } from "./browser.js";
import { checkScreenAt } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

describe("the Webhooks screen", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();

  it("adds an endpoint, shows its secret once, sends a test event the receiver verifies, follows the delivery live and deletes the endpoint once confirmed", async () => {
    const received: { body: string; headers: http.IncomingHttpHeaders }[] = [];
    const receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        received.push({ body: Buffer.concat(chunks).toString(), headers: request.headers });
        // A slow receiver: the screen shows the delivery pending before it succeeds.
        setTimeout(() => response.writeHead(204).end(), 1_500);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    suite.defer(() => new Promise((resolve) => receiver.close(resolve)));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

    const payer = await suite.stack.market.payer(1_000_000n);
    const dashboard = await suite.open(payer.wallet);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByLabel("URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await page.getByTestId("webhook-secret").textContent())!;
    assert.match(secret, /^whsec_/);
    await checkScreenAt(page, "webhooks-secret");
    await page.getByRole("button", { name: "I have stored it" }).click();
    assert.equal(await page.getByTestId("webhook-secret").count(), 0, "the secret is not shown again");

    const endpoint = page.getByTestId("webhook-endpoint");
    // The deliveries already open when the test event is sent: the list reads it at once.
    await endpoint.getByRole("button", { name: "Deliveries" }).click();
    await endpoint.getByText("Nothing sent yet").waitFor();
    await endpoint.getByRole("button", { name: "Send a test event" }).click();
    await page.getByRole("status").filter({ hasText: "webhook.test" }).waitFor();
    const status = page.getByTestId("webhook-delivery-status");
    await status.filter({ hasText: /^pending$/ }).waitFor({ timeout: 5_000 });
    const deadline = Date.now() + 20_000;
    while (received.length === 0) {
      if (Date.now() > deadline) throw new Error("the test event never came");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const event = await verifyWebhook(secret, received[0]!.body, received[0]!.headers as Record<string, string>);
    assert.equal(event.type, "webhook.test");

    // Followed until final, untouched: no Refresh.
    await status.filter({ hasText: /^succeeded$/ }).waitFor({ timeout: 10_000 });
    await checkScreenAt(page, "webhooks");

    // Delete asks first: Cancel keeps the endpoint and puts the focus back on Delete.
    await endpoint.getByRole("button", { name: "Delete", exact: true }).click();
    const confirm = page.getByRole("group", { name: `Confirm deleting ${url}` });
    await confirm.waitFor();
    await checkScreenAt(page, "webhooks-confirm-delete");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    assert.equal(await confirm.count(), 0);
    await page.waitForFunction(() => document.activeElement?.textContent === "Delete");
    assert.equal(await page.getByTestId("webhook-endpoint").count(), 1, "cancelled: the endpoint stays");
    await endpoint.getByRole("button", { name: "Delete", exact: true }).click();
    await confirm.getByRole("button", { name: "Yes, delete it" }).click();
    await page.getByText("No endpoints yet").waitFor();
  });
});
