// handleExecute without a transport, on a clock the tests set; the replay cache; keypair files;
// what createAgentService refuses to start with.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  ed25519PublicKey,
  formatAddress,
  parseSigningKeyProof,
  signRequest,
  verifyCreatorResponse,
  verifySigningKeyProof,
} from "@agent-market/program";

import {
  createAgentService,
  keyProof,
  parseKeypairJson,
  readKeypairFile,
  type AgentServiceOptions,
  type ExecuteHttpRequest,
  type ServiceResponse,
  type ServiceStream,
} from "../src/index.js";
import { ReplayCache } from "../src/replay-cache.js";
import {
  creatorPublicKey,
  creatorSeed,
  executeRequest,
  expectedAnswer,
  jsonAnswer,
  marketplaceKey,
  marketplaceSeed,
  otherAgent,
  servedAgent,
  strangerSeed,
} from "./helpers.js";

const T0_MS = Date.parse("2030-01-01T00:00:00Z");

function serviceAt(clock: { now_ms: number }, overrides: Partial<AgentServiceOptions> = {}) {
  return createAgentService({
    signingKey: creatorSeed,
    marketplaceKey,
    agents: [servedAgent],
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    handler: ({ task, parameters }) => ({ task, parameters }),
    now: () => clock.now_ms,
    onError: () => {},
    ...overrides,
  });
}

function signed(body: string, timestamp_secs: number, headers: Record<string, string | string[]> = {}): ExecuteHttpRequest {
  const header = signRequest(marketplaceSeed, { method: "POST", path: "/execute", body, timestamp_secs });
  return {
    method: "POST",
    path: "/execute",
    headers: { "agentmarket-signature": header, ...headers },
    body: new TextEncoder().encode(body),
  };
}

const code = (response: ServiceResponse | ServiceStream) => (jsonAnswer(response).body as { error?: { code: string } }).error?.code ?? "ok";

describe("handleExecute", () => {
  it("answers like the HTTP listeners, without one", async () => {
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock);
    const request = executeRequest("t", { a: 1 }, { deadline: new Date(T0_MS + 60_000).toISOString() });
    const response = jsonAnswer(await service.handleExecute(signed(JSON.stringify(request), T0_MS / 1000)));
    assert.equal(response.status, 200);
    assert.ok(verifyCreatorResponse(response.body, expectedAnswer(request)).ok);
  });

  it("forgets a signature once its timestamp is stale, and refuses it then as stale", async () => {
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock, { toleranceSecs: 10 });
    const request = executeRequest("t", {}, { deadline: new Date(T0_MS + 3_600_000).toISOString() });
    const call = signed(JSON.stringify(request), T0_MS / 1000);
    assert.equal(code(await service.handleExecute(call)), "ok");
    clock.now_ms += 10_000;
    assert.equal(code(await service.handleExecute(call)), "replayed_request");
    clock.now_ms += 1000;
    assert.equal(code(await service.handleExecute(call)), "stale_timestamp");
  });

  it("remembers an execution id until its deadline", async () => {
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock, { toleranceSecs: 10 });
    const request = executeRequest("t", {}, { deadline: new Date(T0_MS + 60_000).toISOString() });
    const body = JSON.stringify(request);
    assert.equal(code(await service.handleExecute(signed(body, T0_MS / 1000))), "ok");
    clock.now_ms += 59_000;
    assert.equal(code(await service.handleExecute(signed(body, clock.now_ms / 1000))), "replayed_request");
    clock.now_ms += 1000;
    assert.equal(code(await service.handleExecute(signed(body, clock.now_ms / 1000))), "deadline_passed");
  });

  it("with replayCacheSize, remembers only that many recent requests", async () => {
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock, { replayCacheSize: 1 });
    const deadline = new Date(T0_MS + 60_000).toISOString();
    const first = JSON.stringify(executeRequest("t", {}, { deadline }));
    const second = JSON.stringify(executeRequest("t", {}, { deadline }));
    assert.equal(code(await service.handleExecute(signed(first, T0_MS / 1000))), "ok");
    assert.equal(code(await service.handleExecute(signed(first, T0_MS / 1000 + 1))), "replayed_request");
    assert.equal(code(await service.handleExecute(signed(second, T0_MS / 1000))), "ok");
    assert.equal(code(await service.handleExecute(signed(first, T0_MS / 1000 + 2))), "ok");
  });

  it("refuses a repeated signature header as malformed", async () => {
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock);
    const body = JSON.stringify(executeRequest("t", {}, { deadline: new Date(T0_MS + 60_000).toISOString() }));
    const call = signed(body, T0_MS / 1000);
    const header = call.headers["agentmarket-signature"] as string;
    const response = await service.handleExecute({ ...call, headers: { "agentmarket-signature": [header, header] } });
    assert.equal(response.status, 401);
    assert.equal(code(response), "malformed_signature");
  });

  it("refuses parameters with no canonical JSON (a lone surrogate) as invalid_request", async () => {
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock);
    const request = executeRequest("t", {}, { deadline: new Date(T0_MS + 60_000).toISOString() });
    const body = JSON.stringify(request).replace('"parameters":{}', '"parameters":{"s":"\\ud800"}');
    const response = jsonAnswer(await service.handleExecute(signed(body, T0_MS / 1000)));
    assert.equal(response.status, 400);
    assert.equal(code(response), "invalid_request");
  });

  it("refuses a request naming an agent it does not serve, before any work and unsigned", async () => {
    // A clone registered with this service's key and endpoint names its own agent account: it
    // gets no work done and no signature it could settle with.
    let handled = 0;
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock, {
      handler: () => {
        handled += 1;
        return {};
      },
    });
    const request = executeRequest("t", {}, { agent: otherAgent, deadline: new Date(T0_MS + 60_000).toISOString() });
    const response = jsonAnswer(await service.handleExecute(signed(JSON.stringify(request), T0_MS / 1000)));
    assert.equal(response.status, 403);
    assert.equal(code(response), "agent_not_served");
    assert.equal(handled, 0);
    assert.ok(!("signature" in (response.body as object)));
    // The same call for the served agent runs.
    const served = executeRequest("t", {}, { deadline: new Date(T0_MS + 60_000).toISOString() });
    const answer = jsonAnswer(await service.handleExecute(signed(JSON.stringify(served), T0_MS / 1000 + 1)));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(handled, 1);
  });

  it("signs the signing-key proof the program checks", () => {
    const service = serviceAt({ now_ms: T0_MS });
    const creator = formatAddress(new Uint8Array(32).fill(0x63));
    const proof = parseSigningKeyProof(service.keyProof(servedAgent, creator));
    assert.ok(proof);
    assert.ok(verifySigningKeyProof(proof, creatorPublicKey, servedAgent, creator));
    assert.ok(!verifySigningKeyProof(proof, creatorPublicKey, otherAgent, creator));
    assert.equal(service.keyProof(servedAgent, creator), keyProof(creatorSeed, servedAgent, creator));
    assert.throws(() => service.keyProof("nope", creator), /agent is not a base58 address/);
  });

  it("refuses a body past maxBodyBytes before reading its signature", async () => {
    const service = serviceAt({ now_ms: T0_MS }, { maxBodyBytes: 10 });
    const response = await service.handleExecute({ method: "POST", path: "/execute", headers: {}, body: new Uint8Array(11) });
    assert.equal(response.status, 413);
    assert.equal(code(response), "payload_too_large");
  });

  it("reports the creator's failures to onError, with the execution id", async () => {
    const reported: [unknown, string | undefined][] = [];
    const clock = { now_ms: T0_MS };
    const service = serviceAt(clock, {
      handler: () => {
        throw new TypeError("x".repeat(2000));
      },
      onError: (error, executionId) => reported.push([error, executionId]),
    });
    const request = executeRequest("t", {}, { deadline: new Date(T0_MS + 60_000).toISOString() });
    const response = jsonAnswer(await service.handleExecute(signed(JSON.stringify(request), T0_MS / 1000)));
    assert.equal(response.status, 500);
    assert.equal(code(response), "handler_error");
    // Long messages are cut: the marketplace gets a reason, not a dump.
    assert.ok((response.body as { error: { message: string } }).error.message.length <= 501);
    assert.equal(reported.length, 1);
    assert.ok(reported[0]![0] instanceof TypeError);
    assert.equal(reported[0]![1], request.execution_id);
  });
});

describe("createAgentService refuses", () => {
  const base = {
    signingKey: creatorSeed,
    marketplaceKey,
    agents: [servedAgent],
    inputSchema: true,
    outputSchema: true,
    handler: () => ({}),
  };
  it("no agents to answer for, or an agent that is not a base58 address", () => {
    assert.throws(() => createAgentService({ ...base, agents: [] }), /agents must list/);
    assert.throws(() => createAgentService({ ...base, agents: ["not an address"] }), /not a base58 address/);
    const { agents: _agents, ...withoutAgents } = base;
    assert.throws(() => createAgentService(withoutAgents as unknown as AgentServiceOptions), /agents must list/);
  });
  it("a marketplace key that is not a base58 public key", () => {
    assert.throws(() => createAgentService({ ...base, marketplaceKey: "not a key" }), TypeError);
  });
  it("a signing key of the wrong size", () => {
    assert.throws(() => createAgentService({ ...base, signingKey: new Uint8Array(33) }), RangeError);
  });
  it("a 64-byte secret key whose public half belongs to another seed", () => {
    const secretKey = new Uint8Array([...creatorSeed, ...ed25519PublicKey(strangerSeed)]);
    assert.throws(() => createAgentService({ ...base, signingKey: secretKey }), /does not belong/);
  });
  it("an invalid schema", () => {
    assert.throws(() => createAgentService({ ...base, inputSchema: { type: "no such type" } }), /input schema/);
    assert.throws(() => createAgentService({ ...base, outputSchema: { minimum: "1" } }), /output schema/);
  });
  it("nonsense limits", () => {
    assert.throws(() => createAgentService({ ...base, maxBodyBytes: 0 }), RangeError);
    assert.throws(() => createAgentService({ ...base, replayCacheSize: 0 }), RangeError);
    assert.throws(() => createAgentService({ ...base, toleranceSecs: -1 }), RangeError);
  });
  it("nothing wrong with Solana's 64-byte secret key", () => {
    const secretKey = new Uint8Array([...creatorSeed, ...creatorPublicKey]);
    assert.equal(createAgentService({ ...base, signingKey: secretKey }).publicKey, createAgentService(base).publicKey);
  });
});

describe("ReplayCache", () => {
  it("refuses a key until it expires", () => {
    const cache = new ReplayCache(10);
    assert.equal(cache.remember("a", 100, 50), true);
    assert.equal(cache.remember("a", 100, 100), false);
    assert.equal(cache.remember("a", 200, 101), true);
    assert.equal(cache.remember("a", 200, 150), false);
  });

  it("holds at most its capacity, dropping expired entries first, then the oldest", () => {
    const cache = new ReplayCache(2);
    cache.remember("a", 10, 0);
    cache.remember("b", 100, 0);
    cache.remember("c", 100, 20);
    assert.equal(cache.size, 2);
    assert.equal(cache.remember("b", 100, 20), false);
    assert.equal(cache.remember("d", 100, 20), true);
    assert.equal(cache.size, 2);
    assert.equal(cache.remember("b", 100, 20), true, "the oldest, b, was dropped");
  });

  it("refuses a capacity below one", () => {
    assert.throws(() => new ReplayCache(0), RangeError);
    assert.throws(() => new ReplayCache(1.5), RangeError);
  });
});

describe("keypair files", () => {
  const keypair = [...creatorSeed, ...creatorPublicKey];

  it("reads Solana CLI's JSON array of 64 bytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-market-creator-"));
    const path = join(dir, "id.json");
    writeFileSync(path, JSON.stringify(keypair));
    assert.deepEqual(await readKeypairFile(path), Uint8Array.from(keypair));
  });

  it("names the file it could not use", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-market-creator-"));
    const path = join(dir, "bad.json");
    writeFileSync(path, "[1,2,3]");
    await assert.rejects(readKeypairFile(path), (error: Error) => error.message.startsWith(path));
  });

  for (const [what, text] of [
    ["not JSON", "seed"],
    ["an object", JSON.stringify({ secretKey: keypair })],
    ["32 numbers", JSON.stringify(keypair.slice(0, 32))],
    ["a number out of range", JSON.stringify([256, ...keypair.slice(1)])],
    ["a fraction", JSON.stringify([0.5, ...keypair.slice(1)])],
    ["halves that disagree", JSON.stringify([...creatorSeed, ...ed25519PublicKey(strangerSeed)])],
  ] as const) {
    it(`refuses ${what}`, () => assert.throws(() => parseKeypairJson(text), TypeError));
  }
});
