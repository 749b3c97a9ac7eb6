// POST /v1/agents/conformance: the listing's endpoint and interface steps alone, before the agent
// exists on chain, with the listing's own probe and error codes; session-only.
import { strict as assert } from "node:assert";

import { agentPda } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator, type CreatorServer } from "./src/creator-server.js";
import { randomId, TestMarket } from "./src/fixtures.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

describe("relayer: the conformance probe before registration", function () {
  this.timeout(60_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let server: CreatorServer;
  let token: string;
  const agent = agentPda(randomId()).toBase58();

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet);
    server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    token = await signIn(relayer, (await market.walletWithUsdc(0n)).wallet);
  });
  after(async () => {
    await server?.close();
    await relayer?.close();
    await market?.stop();
  });

  const body = (overrides: Record<string, unknown> = {}) => ({
    agent,
    endpoint: server.url,
    signing_key: server.signing.publicKey.toBase58(),
    input_schema: ECHO_INPUT_SCHEMA,
    output_schema: ECHO_OUTPUT_SCHEMA,
    max_execution_secs: 5,
    ...overrides,
  });
  const probe = (b: unknown, t: string | null = token) =>
    api<{ ok: boolean; latency_ms: number }>(relayer, "POST", "/v1/agents/conformance", { ...(t === null ? {} : { token: t }), body: b });

  it("sends the listing's signed probe for an agent not on chain yet and answers its latency", async () => {
    const before = server.received.length;
    const answer = await probe(body());
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.ok, true);
    assert.equal(typeof answer.body.latency_ms, "number");
    const received = server.received.slice(before);
    assert.equal(received.length, 1);
    assert.equal(received[0]!.signature_ok, true, "signed by the marketplace's request key");
    assert.equal(received[0]!.body.agent, agent);
    assert.deepEqual(received[0]!.body.parameters, { language: "en" }, "parameters built from the input schema");
  });

  it("fails with the listing's codes: another signing key, an endpoint that does not answer", async () => {
    const wrongKey = await probe(body({ signing_key: Keypair.generate().publicKey.toBase58() }));
    assert.equal(wrongKey.status, 422);
    assert.equal(errorCode(wrongKey), "probe_bad_signature");
    const nobody = await probe(body({ endpoint: "http://127.0.0.1:9" }));
    assert.equal(errorCode(nobody), "endpoint_unreachable");
  });

  it("refuses bad input before probing, and callers without a session", async () => {
    const before = server.received.length;
    const badAgent = await probe(body({ agent: "not-an-address" }));
    assert.equal(badAgent.status, 400);
    assert.equal(errorCode(badAgent), "validation_failed");
    const badSecs = await probe(body({ max_execution_secs: 0 }));
    assert.equal(errorCode(badSecs), "validation_failed");
    const badSchema = await probe(body({ input_schema: { type: "string" } }));
    assert.equal(badSchema.status, 400);
    assert.equal(errorCode(badSchema), "invalid_schema");
    const anonymous = await probe(body(), null);
    assert.equal(anonymous.status, 401);
    assert.equal(errorCode(anonymous), "session_required");
    assert.equal(server.received.length, before, "nothing was sent to the service");
  });
});
