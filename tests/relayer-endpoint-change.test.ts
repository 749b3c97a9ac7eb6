// The endpoint an execution calls is the one the listing's probe checked. A creator who points
// the agent's account elsewhere with update_agent gets the listing paused (fail closed) until it
// lists the new endpoint, which is then probed; no execution ever reaches an unprobed URL.
import { strict as assert } from "node:assert";

import { listingHash, updateAgentInstructions } from "@agent-market/program";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator, type CreatorServer } from "./src/creator-server.js";
import { signingKeyProof, TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { execute, listAgent, newPayer, pricingWire, type ListedAgent } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

const PRICE = 250_000n;
const DOC = {
  name: "Echo",
  description: "Echoes the task and counts its words.",
  tags: ["test"],
  input_schema: ECHO_INPUT_SCHEMA,
  output_schema: ECHO_OUTPUT_SCHEMA,
};

describe("relayer: the executed endpoint is the probed one", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  const servers: CreatorServer[] = [];
  let agent: ListedAgent;

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    agent = await listAgent(market, relayer);
    servers.push(agent.server);
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await relayer?.close();
    await market?.stop();
  });

  it("pauses a listing whose endpoint changed on-chain, calls nothing unprobed, and runs again once the new endpoint is listed", async () => {
    const payer = await newPayer(market, relayer, 10_000_000n);
    assert.equal((await execute(relayer, payer, agent.address)).status, 200);
    assert.equal(agent.server.received.length, 2, "the probe and one call");

    // The creator moves the agent to another service (signing with its own key, so a call there
    // would verify and settle) without telling the marketplace.
    const moved = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    servers.push(moved);
    await market.send(
      updateAgentInstructions({
          programId: market.programId,
          creator: agent.creator.wallet.publicKey,
          agent: agent.address,
          payoutAccount: agent.creator.tokenAccount,
          terms: {
            signingKey: moved.signing.publicKey.toBytes(),
            endpoint: moved.url,
            listingHash: listingHash(DOC),
            pricing: agent.pricing,
            maxExecutionSecs: 3,
          },
          signingKeyProof: signingKeyProof(moved.signing, agent.address, agent.creator.wallet.publicKey),
        }),
      [agent.creator.wallet],
    );

    const balance = await market.usdc(payer.tokenAccount);
    const refused = await execute(relayer, payer, agent.address);
    assert.equal(errorCode(refused), "endpoint_changed", JSON.stringify(refused.body));
    assert.equal(refused.status, 409);
    assert.equal(moved.received.length, 0, "the unprobed endpoint got no request");
    const path = `/v1/agents/${agent.address.toBase58()}`;
    const listing = await api(relayer, "GET", path);
    assert.equal(listing.body.status, "paused");
    assert.equal(listing.body.endpoint, agent.server.url, "the listing shows the endpoint it probed");

    const next = await execute(relayer, payer, agent.address);
    assert.equal(errorCode(next), "agent_unavailable");
    assert.equal(moved.received.length, 0);
    assert.equal(await market.usdc(payer.tokenAccount), balance, "the refused calls cost nothing");

    // Resuming runs the checks, which the old terms no longer pass; listing the new ones probes them.
    const token = await signIn(relayer, agent.creator.wallet);
    const resumed = await api(relayer, "POST", `${path}/resume`, { token });
    assert.equal(resumed.status, 422);
    assert.equal(errorCode(resumed), "signing_key_mismatch", "the first check the old terms fail");
    const updated = await api(relayer, "PATCH", path, {
      token,
      body: { endpoint: moved.url, signing_key: moved.signing.publicKey.toBase58(), pricing: pricingWire(agent.pricing) },
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.status, "paused", "an update does not resume by itself");
    assert.equal(moved.received.length, 1, "the new endpoint was probed");
    assert.equal((await api(relayer, "POST", `${path}/resume`, { token })).status, 200);
    assert.equal(moved.received.length, 2, "resuming probed it again");
    assert.equal((await execute(relayer, payer, agent.address)).status, 200);
    assert.equal(moved.received.length, 3);
    assert.equal(await market.usdc(payer.tokenAccount), balance - PRICE);
  });

  it("refunds an async execution whose agent's endpoint changed after it was accepted, calling nothing unprobed", async () => {
    const other = await listAgent(market, relayer);
    servers.push(other.server);
    const payer = await newPayer(market, relayer, 10_000_000n);
    const moved = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    servers.push(moved);
    await market.send(
      updateAgentInstructions({
          programId: market.programId,
          creator: other.creator.wallet.publicKey,
          agent: other.address,
          payoutAccount: other.creator.tokenAccount,
          terms: {
            signingKey: moved.signing.publicKey.toBytes(),
            endpoint: moved.url,
            listingHash: listingHash(DOC),
            pricing: other.pricing,
            maxExecutionSecs: 3,
          },
          signingKeyProof: signingKeyProof(moved.signing, other.address, other.creator.wallet.publicKey),
        }),
      [other.creator.wallet],
    );
    const balance = await market.usdc(payer.tokenAccount);
    const accepted = await execute(relayer, payer, other.address, undefined, { prefer: "respond-async" });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const id = (accepted.body as { id: string }).id;
    const deadline = Date.now() + 30_000;
    let execution: { status: string; failure: { code: string } | null } | undefined;
    for (;;) {
      execution = (await api<{ status: string; failure: { code: string } | null }>(relayer, "GET", `/v1/executions/${id}`, { token: payer.apiKey })).body;
      if (execution.status === "refunded" || Date.now() > deadline) break;
      await sleep(100);
    }
    assert.equal(execution.status, "refunded", JSON.stringify(execution));
    assert.equal(execution.failure?.code, "endpoint_changed");
    assert.equal(moved.received.length, 0, "the unprobed endpoint got no request");
    assert.equal(other.server.received.length, 1, "the probed one got only its probe");
    assert.equal(await market.usdc(payer.tokenAccount), balance);
    assert.equal((await api(relayer, "GET", `/v1/agents/${other.address.toBase58()}`)).body.status, "paused");
  });
});
