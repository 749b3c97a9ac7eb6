// The local marketplace's starter host and the relayer's POST /dashboard-starter-agent: a newcomer's
// wallet gets a signing key for its planned agent, registers the agent with it on localnet, lists
// it and is paid for a call, with no service of its own. Who may ask (a signed-in wallet, for
// itself, on a relayer configured with the host), what it costs (a key kept by the host: at most a
// few per wallet), and what asking wrongly or again gains (the same key; another wallet's agent
// refused).
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { startStarterHost, starterInputSchema, starterOutputSchema, type RunningStarterHost, type StarterKey } from "@agent-market/examples";
import { agentPda, parseSigningKeyProof, verifySigningKeyProof } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { MIN_COLLATERAL_USDC, TestMarket, randomId } from "./src/fixtures.js";
import { execute, newPayer, registerOnChain } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, writeKeypair, type RunningRelayer } from "./src/relayer.js";

const TOKEN = randomBytes(24).toString("hex");
const PER_WALLET = 3;

describe("the starter host behind POST /dashboard-starter-agent", function () {
  this.timeout(90_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let bare: RunningRelayer;
  let host: RunningStarterHost;
  let dir: string;

  before(async () => {
    market = await TestMarket.start();
    dir = mkdtempSync(join(tmpdir(), "starter-"));
    // As npm start does: the host trusts the marketplace key the relayer is then started with.
    const marketplace = Keypair.generate();
    host = await startStarterHost({
      marketplaceKey: marketplace.publicKey.toBase58(),
      keysFile: join(dir, "keys.json"),
      adminToken: TOKEN,
      maxAgentsPerCreator: PER_WALLET,
    });
    const dashboard = { DASHBOARD_DIR: dir, DASHBOARD_LOCALNET: "true" };
    relayer = await startRelayer(market.localnet, {
      ...dashboard,
      MARKETPLACE_KEYPAIR: writeKeypair(marketplace),
      DASHBOARD_STARTER_AGENT_URL: host.url,
      DASHBOARD_STARTER_AGENT_TOKEN: TOKEN,
    });
    bare = await startRelayer(market.localnet, dashboard);
  });
  after(async () => {
    await host?.close();
    await relayer?.close();
    await bare?.close();
    await market?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const plannedAgent = () => {
    const agentId = randomId();
    return { agentId, address: agentPda(agentId, market.programId) };
  };
  const ask = (token: string | undefined, agent: PublicKey | string, on = relayer) =>
    api<StarterKey & { object: string } & Record<string, unknown>>(on, "POST", "/dashboard-starter-agent", { token, body: { agent: agent.toString() } });

  it("is only for a signed-in wallet, on a relayer given a starter host", async () => {
    const { address } = plannedAgent();
    const anonymous = await ask(undefined, address);
    assert.equal(anonymous.status, 401);
    assert.equal(errorCode(anonymous), "session_required");
    const token = await signIn(bare, Keypair.generate());
    const unconfigured = await ask(token, address, bare);
    assert.equal(unconfigured.status, 404);
    const config = await api<{ starter_agent: boolean }>(bare, "GET", "/dashboard-config.json");
    assert.equal(config.body.starter_agent, false);
    assert.equal((await api<{ starter_agent: boolean }>(relayer, "GET", "/dashboard-config.json")).body.starter_agent, true);
    const bad = await ask(await signIn(relayer, Keypair.generate()), "not-an-address");
    assert.equal(bad.status, 400);
    assert.equal(errorCode(bad), "validation_failed");
  });

  it("gives the wallet a key proven for its agent, the same one when asked again, and none to another wallet", async () => {
    const wallet = Keypair.generate();
    const token = await signIn(relayer, wallet);
    const { address } = plannedAgent();
    const first = await ask(token, address);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.object, "starter_agent");
    assert.equal(first.body.endpoint, `${host.url}/agents/${address.toBase58()}`);
    assert.deepEqual(first.body.input_schema, starterInputSchema);
    assert.deepEqual(first.body.output_schema, starterOutputSchema);
    const proof = parseSigningKeyProof(first.body.key_proof);
    assert.ok(proof && verifySigningKeyProof(proof, new PublicKey(first.body.signing_key).toBytes(), address, wallet.publicKey), "the proof names this agent and wallet");
    const again = await ask(token, address);
    assert.equal(again.body.signing_key, first.body.signing_key);
    const other = await ask(await signIn(relayer, Keypair.generate()), address);
    assert.equal(other.status, 409);
    assert.equal(errorCode(other), "starter_agent_taken");
    assert.equal(other.body.signing_key, undefined, "no key of another wallet's agent is given out");
  });

  it(`keeps ${PER_WALLET} agents a wallet, then refuses: 429 starter_agent_limit`, async () => {
    const token = await signIn(relayer, Keypair.generate());
    for (let i = 0; i < PER_WALLET; i += 1) assert.equal((await ask(token, plannedAgent().address)).status, 200);
    const over = await ask(token, plannedAgent().address);
    assert.equal(over.status, 429);
    assert.equal(errorCode(over), "starter_agent_limit");
  });

  it("answers a wallet directly only with the host's token: the relayer's route is the way in", async () => {
    const answer = await fetch(`${host.url}/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer wrong" },
      body: JSON.stringify({ agent: plannedAgent().address.toBase58(), creator: Keypair.generate().publicKey.toBase58() }),
    });
    assert.equal(answer.status, 401);
  });

  it("lists a starter agent registered with the key, and settles a paid call to it", async () => {
    const creator = await market.walletWithUsdc(MIN_COLLATERAL_USDC);
    const token = await signIn(relayer, creator.wallet);
    const { agentId, address } = plannedAgent();
    const key = (await ask(token, address)).body;
    const doc = { name: "My first agent", description: "Answers back.", tags: [], input_schema: key.input_schema, output_schema: key.output_schema };
    await registerOnChain(market, {
      creator,
      agentId,
      signing: { publicKey: new PublicKey(key.signing_key), keyProof: parseSigningKeyProof(key.key_proof)! },
      endpoint: key.endpoint,
      listing: doc,
      pricing: { kind: "PayPerUse", priceUsdc: 10_000n },
    });
    const listed = await api(relayer, "POST", "/v1/agents", {
      token,
      body: { agent: address.toBase58(), ...doc, endpoint: key.endpoint, signing_key: key.signing_key, pricing: { model: "pay_per_use", price_usdc: "0.010000" } },
    });
    assert.equal(listed.status, 201, JSON.stringify(listed.body));
    const payer = await newPayer(market, relayer, 1_000_000n);
    const run = await execute(relayer, payer, address, { task: "say it back", parameters: { text: "hello starter agent" } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.deepEqual(run.body.output, { reply: "You said: hello starter agent", words: 3 });
    assert.equal(run.body.status, "succeeded");
  });

  it("says what the service answered when it holds no key for the agent: probe_http_error with its code and words", async () => {
    const wallet = Keypair.generate();
    const token = await signIn(relayer, wallet);
    const served = plannedAgent().address;
    const key = (await ask(token, served)).body;
    const unserved = plannedAgent().address;
    const probe = await api(relayer, "POST", "/v1/agents/conformance", {
      token,
      body: {
        agent: served.toBase58(),
        endpoint: `${host.url}/agents/${unserved.toBase58()}`,
        signing_key: key.signing_key,
        key_proof: key.key_proof,
        input_schema: key.input_schema,
        output_schema: key.output_schema,
        max_execution_secs: 10,
      },
    });
    assert.equal(probe.status, 422, JSON.stringify(probe.body));
    assert.equal(errorCode(probe), "probe_http_error");
    const error = probe.body.error as Record<string, unknown>;
    assert.equal(error.message, "Conformance probe: the endpoint answered 403 agent_not_served.");
    assert.equal(error.status, 403);
    assert.equal(error.service_code, "agent_not_served");
    assert.match(String(error.service_message), /^this starter host holds no signing key for agent /);
  });
});
