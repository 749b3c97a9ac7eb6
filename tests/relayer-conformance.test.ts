// POST /v1/agents/conformance: the listing's endpoint and interface steps alone, before the agent
// exists on chain, with the listing's own probe and error codes; session-only. The probe is a
// request the marketplace signs, so only the signing key's holder, signed in as the agent's
// creator, may have it sent, with the relayer's own task, and no answer names an address a host
// name resolved to. Every refusal reaches the creator's service with nothing.
import { strict as assert } from "node:assert";

import { agentPda, formatSigningKeyProof, PROBE_TASK, signSigningKeyProof } from "@agent-market/program";
import { Keypair, PublicKey } from "@solana/web3.js";

import { ECHO_INPUT_SCHEMA, ECHO_OUTPUT_SCHEMA, startCreator, type CreatorServer } from "./src/creator-server.js";
import { randomId, TestMarket, type Wallet } from "./src/fixtures.js";
import { registerOnChain } from "./src/marketplace.js";
import { api, errorCode, signIn, startRelayer, type RunningRelayer } from "./src/relayer.js";

describe("relayer: the conformance probe before registration", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  let server: CreatorServer;
  let creator: Wallet;
  let token: string;
  let agent: PublicKey;

  before(async () => {
    market = await TestMarket.start();
    agent = agentPda(randomId(), market.programId);
    relayer = await startRelayer(market.localnet);
    server = await startCreator(relayer.marketplaceKey.publicKey.toBase58());
    creator = await market.walletWithUsdc(0n);
    token = await signIn(relayer, creator.wallet);
  });
  after(async () => {
    await server?.close();
    await relayer?.close();
    await market?.stop();
  });

  const proof = (signing: Keypair, forAgent: PublicKey = agent, forCreator: PublicKey = creator.wallet.publicKey) =>
    formatSigningKeyProof(signSigningKeyProof(signing.secretKey, forAgent, forCreator));
  const body = (overrides: Record<string, unknown> = {}) => ({
    agent: agent.toBase58(),
    endpoint: server.url,
    signing_key: server.signing.publicKey.toBase58(),
    input_schema: ECHO_INPUT_SCHEMA,
    output_schema: ECHO_OUTPUT_SCHEMA,
    max_execution_secs: 5,
    key_proof: proof(server.signing),
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
    assert.equal(received[0]!.body.agent, agent.toBase58());
    assert.equal(received[0]!.body.task, PROBE_TASK, "the relayer's own task");
    assert.deepEqual(received[0]!.body.parameters, { language: "en" }, "parameters built from the input schema");
  });

  it("fails with the listing's codes: another signing key, an endpoint that does not answer", async () => {
    const other = Keypair.generate();
    const wrongKey = await probe(body({ signing_key: other.publicKey.toBase58(), key_proof: proof(other) }));
    assert.equal(wrongKey.status, 422);
    assert.equal(errorCode(wrongKey), "probe_bad_signature");
    const nobody = await probe(body({ endpoint: "http://127.0.0.1:9" }));
    assert.equal(errorCode(nobody), "endpoint_unreachable");
  });

  it("never names the address a host name resolved to", async () => {
    const answer = await probe(body({ endpoint: "http://localhost:9" }));
    assert.equal(errorCode(answer), "endpoint_unreachable");
    assert.doesNotMatch(JSON.stringify(answer.body), /127\.0\.0\.1|::1/);
  });

  it("says only \"not allowed\" of a name that does not resolve, as of one resolving to a refused address", async () => {
    const before = server.received.length;
    const unknown = await probe(body({ endpoint: "http://agent-market-test.invalid:9" }));
    assert.equal(unknown.status, 422);
    assert.equal(errorCode(unknown), "endpoint_not_allowed");
    assert.equal(
      (unknown.body as unknown as { error: { message: string } }).error.message,
      "Conformance probe: agent-market-test.invalid is not allowed by the development endpoint policy.",
    );
    assert.equal(server.received.length, before);
  });

  it("probes only for the key's holder, signed in as the agent's creator; nothing reaches the service otherwise", async () => {
    const before = server.received.length;
    const refused = async (b: unknown, status: number, code: string, t: string = token) => {
      const answer = await probe(b, t);
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(errorCode(answer), code);
    };
    // Anyone naming a stranger's endpoint and key: no proof.
    const { key_proof: _unused, ...withoutProof } = body();
    await refused(withoutProof, 403, "key_proof_required");
    // A proof by another key than the one probed with.
    await refused(body({ key_proof: proof(Keypair.generate()) }), 403, "invalid_key_proof");
    // The holder's proof for another agent, or for another wallet (replayed by this one).
    await refused(body({ key_proof: proof(server.signing, agentPda(randomId(), market.programId)) }), 403, "invalid_key_proof");
    await refused(body({ key_proof: proof(server.signing, agent, Keypair.generate().publicKey) }), 403, "invalid_key_proof");
    await refused(body({ key_proof: "not base58 0OIl" }), 403, "invalid_key_proof");
    // The task and parameters are the relayer's, not the caller's.
    await refused(body({ probe: { task: "write my essay", parameters: { language: "en" } } }), 400, "validation_failed");
    // An agent on chain under another wallet.
    const stranger = await registerOnChain(market, {
      signing: Keypair.generate(),
      endpoint: server.url,
      listing: { name: "n", description: "d", tags: [], input_schema: ECHO_INPUT_SCHEMA, output_schema: ECHO_OUTPUT_SCHEMA },
      pricing: { kind: "PayPerUse", priceUsdc: 250_000n },
    });
    const { key_proof: _none, ...strangers } = body({ agent: stranger.address.toBase58() });
    await refused(strangers, 403, "not_agent_creator");
    assert.equal(server.received.length, before, "nothing was sent to the service");
  });

  it("needs no proof once the agent is on chain under this wallet with this key", async () => {
    const registered = await registerOnChain(market, {
      signing: server.signing,
      endpoint: server.url,
      listing: { name: "n", description: "d", tags: [], input_schema: ECHO_INPUT_SCHEMA, output_schema: ECHO_OUTPUT_SCHEMA },
      pricing: { kind: "PayPerUse", priceUsdc: 250_000n },
    });
    const owner = await signIn(relayer, registered.creator.wallet);
    const { key_proof: _unused, ...withoutProof } = body({ agent: registered.address.toBase58() });
    const answer = await probe(withoutProof, owner);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    // Another key for that agent (a planned update_agent) needs its proof again.
    const next = Keypair.generate();
    const { key_proof: _none, ...otherKey } = body({ agent: registered.address.toBase58(), signing_key: next.publicKey.toBase58() });
    const refused = await probe(otherKey, owner);
    assert.equal(errorCode(refused), "key_proof_required");
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
