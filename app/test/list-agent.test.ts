// Listing an agent from the web, in a real browser against a real relayer, indexer and localnet,
// with a real creator service: the checklist, the form's validation, a signing key generated in
// the browser and downloaded once, the relayer's probe before anything is signed (a dead endpoint
// and a wrong key stop there), the signing key's proof pasted and checked before anything is
// sent, register_agent signed by the wallet, then the listing.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";

import { collateralVaultPda, fetchAgent, formatSigningKeyProof, signSigningKeyProof } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator, type CreatorServer } from "@agent-market/tests/creator-server";
import { MIN_COLLATERAL_USDC } from "@agent-market/tests/fixtures";
import { api } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreen } from "./page-checks.js";
import { dashboardSuite } from "./suite.js";

describe("listing an agent from the dashboard", function () {
  this.timeout(300_000);
  const suite = dashboardSuite();
  let server: CreatorServer;

  before(async () => {
    server = await startCreator(suite.stack.relayer.marketplaceKey.publicKey.toBase58());
    suite.defer(() => server.close());
  });

  it("checks the form, offers a generated key once, probes the endpoint before any collateral is locked, then registers and lists", async () => {
    const { stack, opened } = suite;
    const creator = await stack.market.walletWithUsdc(MIN_COLLATERAL_USDC);
    for (const width of [375, 1280]) {
      const dashboard = await suite.open(creator.wallet, width);
      await signInWithTestWallet(dashboard);
      // A wallet that registered nothing yet: My agents says so and where to start.
      await dashboard.page.getByRole("link", { name: "My agents" }).click();
      await dashboard.page.getByText("This wallet has registered no agent.").waitFor();
      await checkScreen(dashboard.page, "my-agents-empty");
      await dashboard.page.getByRole("navigation").getByRole("link", { name: "List an agent" }).click();
      await dashboard.page.getByTestId("minimum-collateral").waitFor();
      await checkScreen(dashboard.page, "list-agent");
    }
    // The rest runs on the phone-sized page.
    const { page } = opened[0]!;
    assert.equal(await page.getByTestId("minimum-collateral").textContent(), "100.00 USDC");
    assert.equal(await page.getByTestId("minimum-collateral").getAttribute("title"), "100.000000 USDC");
    const register = page.getByRole("button", { name: "Sign, register and list" });
    assert.equal(await register.isDisabled(), true, "nothing to sign before the endpoint is checked");
    assert.equal(
      await page.locator("#register-gate").textContent(),
      "Registering locks your collateral, so check your endpoint first: registering opens once it is reachable and conforms.",
    );

    await page.getByRole("button", { name: "Check my endpoint" }).click();
    const problems = await page.getByTestId("listing-problems").locator("li").allTextContents();
    assert.deepEqual(problems, [
      "Name: 1 to 100 characters.",
      "Description: 1 to 5,000 characters.",
      "Endpoint: an http(s) URL your service answers POST /execute on.",
      "Price per call: an amount in USDC above 0, e.g. 0.25.",
      "Signing key: paste your service's public key, or generate one.",
    ]);

    // A key made here: its secret is offered once, as a Solana keypair file.
    await page.getByLabel("Generate one here").check();
    await page.getByRole("button", { name: "Generate a signing key" }).click();
    const shown = (await page.getByTestId("generated-key").locator(".mono").textContent())!;
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download the keypair file (shown once)" }).click()]);
    const file = JSON.parse(readFileSync((await download.path())!, "utf8")) as number[];
    assert.equal(file.length, 64);
    assert.equal(Keypair.fromSecretKey(Uint8Array.from(file)).publicKey.toBase58(), shown, "the file holds the key shown");
    assert.equal(await page.getByRole("link", { name: /Download the keypair file/ }).count(), 0, "offered once");

    // This test's service signs with its own key: paste that one.
    await page.getByLabel("Paste my service's public key").check();
    await page.getByLabel("Public key (base58)").fill("0OIl");
    await page.getByLabel("Name").fill("Echo from the web");
    await page.getByLabel("Description").fill("Echoes the task and counts its words.");
    await page.getByLabel("Tags (comma separated)").fill("test, web");
    await page.getByLabel("Endpoint (your service's base URL)").fill(server.url);
    await page.getByLabel("Price per call, USDC").fill("0.25");
    await page.getByLabel("Input schema (JSON Schema)").fill("{ not json");
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    const second = await page.getByTestId("listing-problems").locator("li").allTextContents();
    assert.match(second[0]!, /^Input schema is not JSON: /);
    assert.equal(second[1], "Signing key: A signing key is written in base58 (no 0, O, I or l).");

    await page.getByLabel("Public key (base58)").fill(server.signing.publicKey.toBase58());
    await page.getByLabel("Input schema (JSON Schema)").fill(JSON.stringify(ECHO_INPUT_SCHEMA, null, 2));
    await page.getByLabel("Output schema (JSON Schema)").fill(JSON.stringify(ECHO_OUTPUT_SCHEMA, null, 2));

    // A pasted key proves itself for the agent address the page chose and this wallet: the page
    // names both and the command that prints the proof, and checks the proof before sending anything.
    const planned = new PublicKey((await page.getByTestId("key-proof-agent").textContent())!);
    assert.equal(
      await page.getByTestId("key-proof-command").textContent(),
      `agent-market key-proof --signing-key <your key file> --creator ${creator.wallet.publicKey.toBase58()} --agent ${planned.toBase58()}`,
    );
    const proofBy = (signing: Keypair) => formatSigningKeyProof(signSigningKeyProof(signing.secretKey, planned, creator.wallet.publicKey));
    const receivedBefore = server.received.length;
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    assert.deepEqual(await page.getByTestId("listing-problems").locator("li").allTextContents(), [
      "Key proof: paste what the command above prints where your key is kept.",
    ]);
    await page.getByLabel("Key proof (base58)").fill(proofBy(Keypair.generate()));
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    await page.getByText("Key proof: not the signing key's proof for this agent and wallet; run the command above with that key.").waitFor();
    assert.equal(server.received.length, receivedBefore, "a refused proof sends nothing");
    await page.getByLabel("Key proof (base58)").fill(proofBy(server.signing));

    // A service nobody answers at: the reachability step fails with the relayer's advice, and
    // the wallet is never asked to sign.
    const reachable = page.getByTestId("step-reachable");
    const conformance = page.getByTestId("step-conformance");
    await page.getByLabel("Endpoint (your service's base URL)").fill("http://127.0.0.1:9");
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    await page.locator('[data-testid="step-reachable"].bad').waitFor({ timeout: 60_000 });
    assert.match(
      (await reachable.textContent())!,
      /^✗ not yet: Endpoint publicly reachable: Nothing answered at http:\/\/127\.0\.0\.1:9 \(.+\)\. What to change: Check that your service is running and listening at that address, .+ endpoint_unreachable$/,
    );
    assert.equal(await conformance.getAttribute("class"), "", "conformance not tried");
    assert.equal(await register.isDisabled(), true);
    assert.equal(
      await page.locator("#register-gate").textContent(),
      "The endpoint check failed (the checklist above says why): fix your service, then check again. Nothing was signed and no collateral is locked.",
    );
    await checkScreen(page, "list-agent-unreachable");
    assert.equal(await page.getByTestId("planned-agent").textContent(), planned.toBase58());
    assert.equal(await fetchAgent(stack.market.connection, planned, { programId: stack.market.programId }), null, "no agent account");
    assert.equal(await stack.market.connection.getAccountInfo(collateralVaultPda(planned, stack.market.programId)), null, "no collateral vault");
    assert.equal(await stack.market.usdc(creator.tokenAccount), MIN_COLLATERAL_USDC, "the collateral stays in the wallet");

    // The service answers but signs with another key than the one entered: conformance fails with
    // its exact code; still nothing signed.
    await page.getByLabel("Endpoint (your service's base URL)").fill(server.url);
    assert.equal(await reachable.getAttribute("class"), "", "a changed endpoint is checked again");
    const other = Keypair.generate();
    await page.getByLabel("Public key (base58)").fill(other.publicKey.toBase58());
    await page.getByLabel("Key proof (base58)").fill(proofBy(other));
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    await page.locator('[data-testid="step-conformance"].bad').waitFor({ timeout: 60_000 });
    assert.equal(await reachable.getAttribute("class"), "ok");
    assert.match(
      (await conformance.textContent())!,
      /: Your service's result is not signed by the key given here: .+\. What to change: Give the public key your service signs with \(its GET \/health names it\), or start the service with this key\. probe_bad_signature$/,
    );
    assert.equal(await register.isDisabled(), true);
    await checkScreen(page, "list-agent-bad-signature");
    assert.equal(await fetchAgent(stack.market.connection, planned, { programId: stack.market.programId }), null, "still no agent account");
    assert.equal(await stack.market.usdc(creator.tokenAccount), MIN_COLLATERAL_USDC);
    // The browser logs each refused probe; those two, and nothing else, are expected here.
    const phone = opened[0]!;
    assert.deepEqual(phone.errors, Array(2).fill("Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"));
    phone.errors.length = 0;

    // The right key: both steps pass and registering opens.
    await page.getByLabel("Public key (base58)").fill(server.signing.publicKey.toBase58());
    await page.getByLabel("Key proof (base58)").fill(proofBy(server.signing));
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    await page.locator('[data-testid="step-conformance"].ok').waitFor({ timeout: 60_000 });
    assert.match((await conformance.textContent())!, /: answered in \d+ ms$/);
    assert.equal(await page.locator("#register-gate").textContent(), "Your endpoint is reachable and conforms: registering is open.");
    await checkScreen(page, "list-agent-checked");
    await register.click();
    await page.getByTestId("listed").waitFor({ timeout: 60_000 });
    await checkScreen(page, "list-agent-listed");

    const agent = (await page.getByTestId("registered-agent").textContent())!;
    assert.equal(agent, planned.toBase58(), "registered at the address the probe was run for");
    const account = (await fetchAgent(stack.market.connection, new PublicKey(agent), { programId: stack.market.programId }))!;
    assert.ok(account.creator.equals(creator.wallet.publicKey));
    assert.equal(account.collateralUsdc, MIN_COLLATERAL_USDC);
    assert.equal(await stack.market.usdc(collateralVaultPda(new PublicKey(agent), stack.market.programId)), MIN_COLLATERAL_USDC, "the minimum collateral is locked");
    assert.equal(await stack.market.usdc(creator.tokenAccount), 0n);
    assert.deepEqual([...account.signingKey], [...server.signing.publicKey.toBytes()]);
    const listing = await api<{ status: string; name: string; tags: string[]; pricing: { price_usdc: string } }>(stack.relayer, "GET", `/v1/agents/${agent}`);
    assert.deepEqual([listing.body.status, listing.body.name, listing.body.tags, listing.body.pricing.price_usdc], ["active", "Echo from the web", ["test", "web"], "0.250000"]);
  });

  it("signs a generated key's proof in the page: the relayer accepts it and probes with that key", async () => {
    const { stack } = suite;
    const creator = await stack.market.walletWithUsdc(MIN_COLLATERAL_USDC);
    const dashboard = await suite.open(creator.wallet, 1280);
    await signInWithTestWallet(dashboard);
    const { page } = dashboard;
    await page.getByRole("navigation").getByRole("link", { name: "List an agent" }).click();
    await page.getByTestId("minimum-collateral").waitFor();
    await page.getByLabel("Generate one here").check();
    await page.getByRole("button", { name: "Generate a signing key" }).click();
    await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download the keypair file (shown once)" }).click()]);
    assert.equal(await page.getByLabel("Key proof (base58)").count(), 0, "no proof to paste for a key made here");
    await page.getByLabel("Name").fill("Echo with a key made here");
    await page.getByLabel("Description").fill("Echoes the task and counts its words.");
    await page.getByLabel("Endpoint (your service's base URL)").fill(server.url);
    await page.getByLabel("Price per call, USDC").fill("0.25");
    await page.getByLabel("Input schema (JSON Schema)").fill(JSON.stringify(ECHO_INPUT_SCHEMA, null, 2));
    await page.getByLabel("Output schema (JSON Schema)").fill(JSON.stringify(ECHO_OUTPUT_SCHEMA, null, 2));
    const received = server.received.length;
    await page.getByRole("button", { name: "Check my endpoint" }).click();
    // This test's service signs with its own key, so the probe's answer fails; that the probe was
    // sent at all shows the relayer took the page's proof for the generated key.
    await page.locator('[data-testid="step-conformance"].bad').waitFor({ timeout: 60_000 });
    assert.match((await page.getByTestId("step-conformance").textContent())!, /probe_bad_signature$/);
    assert.equal(server.received.length, received + 1);
    assert.deepEqual(dashboard.errors.splice(0), ["Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"]);
  });
});
