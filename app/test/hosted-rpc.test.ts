// The dashboard of a marketplace on a hosted network, where the relayer relays no chain for the
// page: with DASHBOARD_DEVNET_RPC_URL the creator's screens read the chain and send what the
// wallet signs to that address themselves (a cluster's public RPC answers CORS, and so does
// localnet, which stands in for it here); without it they say how to proceed instead.
import { strict as assert } from "node:assert";

import { collateralVaultPda } from "@agent-market/program";

import { MIN_COLLATERAL_USDC } from "@agent-market/tests/fixtures";
import { listAgent, type ListedAgent } from "@agent-market/tests/marketplace";
import { api, startRelayerWith, type RunningRelayer } from "@agent-market/tests/relayer";
import { signInWithTestWallet } from "./browser.js";
import { checkScreen } from "./page-checks.js";
import { waitFor } from "./stack.js";
import { dashboardSuite } from "./suite.js";

describe("the dashboard on a hosted network", function () {
  this.timeout(300_000);
  const suite = dashboardSuite({ dashboard: (rpcUrl) => ({ DASHBOARD_DEVNET_RPC_URL: rpcUrl }) });
  let bare: RunningRelayer;
  let agent: ListedAgent;

  before(async () => {
    // A second instance of the same marketplace (its database, queue and keys), whose page is
    // given no RPC address.
    const env = { ...suite.stack.relayer.env };
    delete env.DASHBOARD_DEVNET_RPC_URL;
    bare = await startRelayerWith(env, { dropDatabase: false });
    suite.defer(() => bare.close());
    agent = await listAgent(suite.stack.market, suite.stack.relayer);
    suite.defer(() => agent.server.close());
  });

  it("tells the page the network's public RPC address, allows it in the page's policy, and relays no chain itself", async () => {
    const { stack } = suite;
    const rpcUrl = stack.market.localnet.rpcUrl;
    const config = await (await fetch(`${stack.relayer.url}/dashboard-config.json`)).json();
    assert.deepEqual(config, {
      arbiters: { devnet: stack.market.arbiter.publicKey.toBase58(), mainnet: null },
      // Not on a hosted network, even where its arbiter is the committed development key.
      dev_arbiter_secret_key: null,
      indexer_graphql_url: stack.graphqlUrl,
      networks: ["devnet"],
      localnet: false,
      starter_agent: false,
      localnet_rpc_url: null,
      rpc_path: null,
      rpc_urls: { devnet: rpcUrl, mainnet: null },
    });
    const page = await fetch(`${stack.relayer.url}/`);
    const connect = /connect-src ([^;]+)/.exec(page.headers.get("content-security-policy")!)![1]!.split(" ");
    assert.deepEqual(connect, ["'self'", new URL(stack.graphqlUrl).origin, new URL(rpcUrl).origin]);
    const relayed = await api(stack.relayer, "POST", "/dashboard-rpc", { body: { jsonrpc: "2.0", id: 1, method: "getSlot", params: [] } });
    assert.equal(relayed.status, 404);
    // Nor is there a faucet: the test-funds button is localnet's only.
    const faucet = await api(stack.relayer, "POST", "/dashboard-faucet", { body: {} });
    assert.equal(faucet.status, 404);
  });

  it("lets a creator top up collateral, the wallet's transaction sent to that address by the page", async () => {
    const { stack } = suite;
    const rpcUrl = new URL(stack.market.localnet.rpcUrl).href;
    const creator = agent.creator;
    await stack.market.localnet.mintUsdc(creator.wallet.publicKey, 5_000_000n);
    const address = agent.address.toBase58();
    await waitFor("the agent in the indexer", async () => {
      const response = await fetch(stack.graphqlUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `query($a: String!) { creator(address: $a) { agents { address } } }`, variables: { a: creator.wallet.publicKey.toBase58() } }),
      });
      const body = (await response.json()) as { data: { creator: { agents: { address: string }[] } } };
      return body.data.creator.agents.some((a) => a.address === address);
    });

    const dashboard = await suite.open(creator.wallet);
    const { page } = dashboard;
    const chainCalls: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && (request.url().startsWith(rpcUrl) || new URL(request.url()).pathname === "/dashboard-rpc")) {
        chainCalls.push(`${request.url()} ${(JSON.parse(request.postData() ?? "{}") as { method?: string }).method}`);
      }
    });
    // No local chain: the browser-kept test wallet is not offered.
    await page.getByRole("button", { name: "Test Wallet", exact: true }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Use the local test wallet" }).count(), 0);
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: address });
    await card.getByLabel("Top up, USDC").fill("2");
    await card.getByRole("button", { name: "Sign and top up" }).click();
    await card.getByTestId("collateral-usdc").filter({ hasText: "102.00 USDC" }).waitFor({ timeout: 60_000 });
    assert.equal(await stack.market.usdc(collateralVaultPda(agent.address, stack.market.programId)), MIN_COLLATERAL_USDC + 2_000_000n);
    assert.ok(chainCalls.includes(`${rpcUrl} sendTransaction`), chainCalls.join("\n"));
    assert.deepEqual(
      chainCalls.filter((call) => !call.startsWith(rpcUrl)),
      [],
      "every chain call went to the public address",
    );
  });

  it("says how to sign instead when the marketplace gives its page no RPC address", async () => {
    const dashboard = await suite.open(agent.creator.wallet, 375, bare.url);
    const { page } = dashboard;
    await signInWithTestWallet(dashboard);
    await page.getByRole("link", { name: "My agents" }).click();
    const card = page.getByTestId("my-agent").filter({ hasText: agent.address.toBase58() });
    await card
      .getByText(
        "This marketplace gives its dashboard no RPC address for devnet (its operator sets DASHBOARD_DEVNET_RPC_URL): use the agent-market CLI to sign this transaction.",
      )
      .waitFor();
    assert.equal(await card.getByRole("button", { name: "Sign and top up" }).count(), 0);

    // Off localnet there is no faucet button: the Wallet screen names devnet's faucets.
    await page.getByRole("link", { name: "Wallet", exact: true }).click();
    const fund = page.getByRole("region", { name: "Fund this wallet" });
    await fund.getByText("Solana faucet").waitFor();
    await fund.getByText("Circle's USDC faucet").waitFor();
    assert.equal(await page.getByRole("button", { name: "Fund with test SOL and USDC" }).count(), 0);
    await checkScreen(page, "wallet-devnet");
  });
});
