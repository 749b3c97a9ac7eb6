// CreatorClient.signBatch against a real creator kit on 127.0.0.1: the batch signature verified
// over the digest the relayer computes, an older kit's 404 as `unsupported`, and every refusal.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { createAgentService, type AgentService } from "@agent-market/creator";
import { agentServicePlugin } from "@agent-market/creator/fastify";
import {
  ed25519PublicKey,
  ed25519Sign,
  EXECUTE_PROTOCOL_VERSION,
  ed25519Verify,
  formatAddress,
  formatExecutionId,
  fromHex,
  parseAddress,
  parseExecutionId,
  requestHash,
  toHex,
  type CreatorExecuteRequest,
  type SignBatchItem,
} from "@agent-market/program";
import { fastify, type FastifyInstance } from "fastify";

import { closeGuardedAgents } from "../src/net/guarded-http.js";
import { CreatorClient, type SignBatchCall } from "../src/creator/creator-client.js";

const marketplaceSeed = new Uint8Array(32).fill(0x4d);
const creatorSeed = new Uint8Array(32).fill(0x43);
const creatorKey = ed25519PublicKey(creatorSeed);
const strangerSeed = new Uint8Array(32).fill(0x58);
const agent = formatAddress(new Uint8Array(32).fill(0x41));
const outputSchema = { type: "object", properties: { echo: { type: "string" } }, required: ["echo"] };

const kitOptions = {
  signingKey: creatorSeed,
  marketplaceKey: formatAddress(ed25519PublicKey(marketplaceSeed)),
  agents: [agent],
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  outputSchema,
  handler: ({ parameters }: { parameters: { text: string } }) => ({ echo: parameters.text }),
};

const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

const u64 = (value: string) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(value));
  return bytes;
};

/** The v2 batch digest of docs/execute-protocol.md, computed here without the library. */
function batchDigestOf(items: SignBatchItem[]): Uint8Array {
  const count = Buffer.alloc(4);
  count.writeUInt32LE(items.length);
  const resultDigests = items.map((item) =>
    sha256(
      Buffer.from("agentmarket/result/v2"),
      parseExecutionId(item.execution_id)!,
      parseAddress(agent)!,
      u64(item.escrow_nonce),
      parseAddress(item.payer)!,
      parseAddress(item.payer_token_account)!,
      u64(String(Math.round(Number(item.amount_usdc) * 1e6))),
      fromHex(item.request_hash),
      fromHex(item.result_hash),
      u64(item.units),
    ),
  );
  return sha256(Buffer.from("agentmarket/result-batch/v2"), parseAddress(agent)!, count, ...resultDigests);
}

function listen(handler: RequestListener): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("CreatorClient.signBatch", () => {
  const client = new CreatorClient({ devnet: { marketplace_signing_key: marketplaceSeed } }, "development");
  let kit: AgentService;
  let kitServer: Server;
  let olderKit: Server;
  let fastifyApp: FastifyInstance;
  let endpoint: string;
  /** Three executions the kit answered through /execute, verified by CreatorClient.call. */
  const items: SignBatchItem[] = [];

  const batchCall = (overrides: Partial<SignBatchCall> = {}): SignBatchCall => ({
    endpoint,
    network: "devnet",
    agent,
    signing_key: creatorKey,
    items,
    timeout_ms: 5_000,
    max_response_bytes: 64 * 1024,
    ...overrides,
  });

  before(async () => {
    kit = createAgentService(kitOptions);
    kitServer = await kit.listen(0, "127.0.0.1");
    endpoint = urlOf(kitServer);
    // A kit from before /sign-batch: it served /execute and answered 404 to any other path.
    olderKit = await listen((req, res) => {
      if (req.url === "/execute") return kit.handler(req, res);
      res.writeHead(404, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: { code: "not_found", message: "this service answers POST /execute and GET /health" } }));
    });
    fastifyApp = fastify();
    await fastifyApp.register(agentServicePlugin, { ...kitOptions, prefix: "/agents/echo" });
    await fastifyApp.listen({ port: 0, host: "127.0.0.1" });
    for (const text of ["one", "two", "three"]) {
      const task = "echo";
      const parameters = { text };
      const request: CreatorExecuteRequest = {
        protocol_version: EXECUTE_PROTOCOL_VERSION,
        execution_id: formatExecutionId(randomBytes(16)),
        agent,
        network: "devnet",
        escrow_nonce: String(items.length),
        payer: formatAddress(new Uint8Array(32).fill(0x50)),
        payer_token_account: formatAddress(new Uint8Array(32).fill(0x54)),
        amount_usdc: "0.250000",
        task,
        parameters,
        request_hash: toHex(requestHash(task, parameters)),
        deadline: new Date(Date.now() + 60_000).toISOString(),
      };
      const outcome = await client.call({
        endpoint,
        request,
        signing_key: creatorKey,
        output_schema: outputSchema,
        timeout_ms: 5_000,
        max_response_bytes: 64 * 1024,
      });
      assert.ok(outcome.ok, outcome.ok ? undefined : outcome.message);
      items.push({
        execution_id: request.execution_id,
        escrow_nonce: request.escrow_nonce,
        payer: request.payer,
        payer_token_account: request.payer_token_account,
        amount_usdc: request.amount_usdc,
        request_hash: request.request_hash,
        result_hash: toHex(outcome.result_hash),
        units: outcome.units.toString(),
        signature: toHex(outcome.signature),
      });
    }
  });

  after(async () => {
    await close(kitServer);
    await close(olderKit);
    await fastifyApp.close();
    closeGuardedAgents();
  });

  it("returns the kit's signature once it verifies over the batch digest, under the agent's key", async () => {
    const outcome = await client.signBatch(batchCall());
    assert.ok(outcome.ok, outcome.ok ? undefined : outcome.message);
    const expected = batchDigestOf(items);
    assert.equal(toHex(outcome.digest), toHex(expected));
    assert.ok(ed25519Verify(outcome.signature, expected, creatorKey));
    assert.equal(typeof outcome.latency_ms, "number");
  });

  it("keeps the endpoint's path: the fastify plugin under a prefix", async () => {
    const { port } = fastifyApp.server.address() as AddressInfo;
    const outcome = await client.signBatch(batchCall({ endpoint: `http://127.0.0.1:${port}/agents/echo`, items: items.slice(1) }));
    assert.ok(outcome.ok, outcome.ok ? undefined : outcome.message);
    assert.equal(toHex(outcome.digest), toHex(batchDigestOf(items.slice(1))));
  });

  it("an older kit's 404: unsupported, so the batch settles with per-call signatures", async () => {
    const outcome = await client.signBatch(batchCall({ endpoint: urlOf(olderKit) }));
    assert.equal(outcome.ok, false);
    assert.deepEqual(!outcome.ok && [outcome.failure, outcome.status], ["unsupported", 404]);
  });

  it("a signature by a key other than the agent's registered one: bad_signature", async () => {
    // Another body than the first test's: the same one signed within the same second is a replay (409).
    const outcome = await client.signBatch(batchCall({ signing_key: ed25519PublicKey(strangerSeed), items: items.slice(0, 2) }));
    assert.deepEqual(!outcome.ok && outcome.failure, "bad_signature");
  });

  it("the kit refusing an item it did not sign: http_error 422 with its code", async () => {
    const forged = { ...items[0]!, result_hash: toHex(new Uint8Array(32).fill(0xee)) };
    const outcome = await client.signBatch(batchCall({ items: [forged] }));
    assert.ok(!outcome.ok);
    assert.equal(outcome.failure, "http_error");
    assert.equal(outcome.status, 422);
    assert.match(outcome.message, /unknown_result_signature/);
  });

  it("refuses to ask for an empty batch or one over MAX_SETTLE_BATCH", async () => {
    await assert.rejects(client.signBatch(batchCall({ items: [] })), /a batch signs 1 to 16 executions, got 0/);
    const seventeen = Array.from({ length: 17 }, () => items[0]!);
    await assert.rejects(client.signBatch(batchCall({ items: seventeen })), /a batch signs 1 to 16 executions, got 17/);
  });

  describe("answers it does not take from a creator", () => {
    let server: Server;
    let answer: (res: import("node:http").ServerResponse) => void;

    before(async () => {
      server = await listen((_req, res) => answer(res));
    });
    after(() => close(server));

    const json = (body: unknown) => (res: import("node:http").ServerResponse) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };

    it("a digest other than the one the relayer computes, even signed by the agent's key: digest_mismatch", async () => {
      const digest = batchDigestOf(items.slice(0, 2));
      answer = json({ digest: toHex(digest), signature: toHex(ed25519Sign(creatorSeed, digest)) });
      const outcome = await client.signBatch(batchCall({ endpoint: urlOf(server) }));
      assert.deepEqual(!outcome.ok && outcome.failure, "digest_mismatch");
    });

    it("a body without a signature: invalid_response", async () => {
      answer = json({ digest: toHex(batchDigestOf(items)) });
      const outcome = await client.signBatch(batchCall({ endpoint: urlOf(server) }));
      assert.deepEqual(!outcome.ok && outcome.failure, "invalid_response");
    });

    it("a redirect is not followed: http_error", async () => {
      answer = (res) => {
        res.writeHead(307, { location: `${endpoint}/sign-batch` });
        res.end();
      };
      const outcome = await client.signBatch(batchCall({ endpoint: urlOf(server) }));
      assert.ok(!outcome.ok);
      assert.deepEqual([outcome.failure, outcome.status], ["http_error", 307]);
      assert.match(outcome.message, /redirects are not followed/);
    });

    it("an answer past max_response_bytes: response_too_large", async () => {
      answer = json({ padding: "x".repeat(10_000) });
      const outcome = await client.signBatch(batchCall({ endpoint: urlOf(server), max_response_bytes: 1_000 }));
      assert.deepEqual(!outcome.ok && outcome.failure, "response_too_large");
    });

    it("no answer before the deadline: timeout", async () => {
      answer = () => {};
      const outcome = await client.signBatch(batchCall({ endpoint: urlOf(server), timeout_ms: 200 }));
      assert.deepEqual(!outcome.ok && outcome.failure, "timeout");
    });
  });

  it("a loopback endpoint under the public policy: endpoint_not_allowed, nothing sent", async () => {
    const publicClient = new CreatorClient({ devnet: { marketplace_signing_key: marketplaceSeed } }, "public");
    const outcome = await publicClient.signBatch(batchCall());
    assert.deepEqual(!outcome.ok && outcome.failure, "endpoint_not_allowed");
  });
});
