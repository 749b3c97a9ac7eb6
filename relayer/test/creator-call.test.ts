// The creator's part of a run, in the relayer's own package: CreatorClient.call against real HTTP
// servers on 127.0.0.1 playing every kind of creator, and the refund each failure becomes
// (creator-verdict.ts). The request is the marketplace's, signed; what comes back is trusted only
// once its signature verifies under the agent's registered key and its output fits the schema.
// What a creator gains by answering wrongly: nothing; each failure refunds the payer, by its own
// reason. The chain's part of a run (the escrow, settle, refund) is tested against localnet in
// tests/relayer-execute.test.ts and tests/relayer-faults.test.ts.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { sha256 } from "@noble/hashes/sha2";
import {
  ed25519PublicKey,
  ed25519Sign,
  ed25519Verify,
  escrowBindingOf,
  EXECUTE_PROTOCOL_VERSION,
  formatAddress,
  formatExecutionId,
  fromHex,
  outputHash,
  parseExecutionId,
  REQUEST_SIGNATURE_HEADER,
  requestHash,
  resultDigest,
  signResult,
  toHex,
  verifyRequestSignature,
  type CreatorExecuteRequest,
} from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { CreatorClient, type CreatorCall, type CreatorFailure } from "../src/creator/creator-client.js";
import { closeGuardedAgents } from "../src/net/guarded-http.js";
import { FAILURES } from "../src/executions/creator-verdict.js";

const marketplaceSeed = new Uint8Array(randomBytes(32));
const creatorSeed = new Uint8Array(randomBytes(32));
const strangerSeed = new Uint8Array(randomBytes(32));
const agent = formatAddress(new Uint8Array(randomBytes(32)));
const outputSchema = { type: "object", properties: { echo: { type: "string" } }, required: ["echo"] };

function request(): CreatorExecuteRequest {
  const parameters = { text: "hello" };
  return {
    protocol_version: EXECUTE_PROTOCOL_VERSION,
    execution_id: formatExecutionId(randomBytes(16)),
    agent,
    network: "devnet",
    escrow_nonce: "41",
    payer: formatAddress(new Uint8Array(randomBytes(32))),
    payer_token_account: formatAddress(new Uint8Array(randomBytes(32))),
    amount_usdc: "0.250000",
    task: "echo",
    parameters,
    request_hash: toHex(requestHash("echo", parameters)),
    deadline: new Date(Date.now() + 60_000).toISOString(),
  };
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

describe("a run's call to the creator (CreatorClient.call) and the refund each failure becomes", () => {
  const client = new CreatorClient({ devnet: { marketplace_signing_key: marketplaceSeed } }, "development");
  const servers: Server[] = [];
  /** Every request a creator server received, with whether the marketplace signed it. */
  const received: { path: string; signed: boolean; body: CreatorExecuteRequest }[] = [];

  async function creator(answer: (req: CreatorExecuteRequest, res: ServerResponse) => void): Promise<string> {
    const handler: RequestListener = async (req, res) => {
      const text = await bodyOf(req);
      const signed = verifyRequestSignature(String(req.headers[REQUEST_SIGNATURE_HEADER] ?? ""), {
        method: "POST",
        path: req.url ?? "",
        body: text,
      }, { marketplace_key: formatAddress(ed25519PublicKey(marketplaceSeed)), now_secs: Math.floor(Date.now() / 1000) });
      const body = JSON.parse(text) as CreatorExecuteRequest;
      received.push({ path: req.url ?? "", signed: signed.ok, body });
      answer(body, res);
    };
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const call = (endpoint: string, overrides: Partial<CreatorCall> = {}, via = client): ReturnType<CreatorClient["call"]> =>
    via.call({
      endpoint,
      request: request(),
      signing_key: ed25519PublicKey(creatorSeed),
      output_schema: outputSchema,
      timeout_ms: 2_000,
      max_response_bytes: 64 * 1024,
      ...overrides,
    });

  after(async () => {
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    closeGuardedAgents();
  });

  it("posts the marketplace-signed request to /execute and accepts a result signed by the agent's key over the result digest", async () => {
    const endpoint = await creator((req, res) => json(res, 200, signResult(creatorSeed, req, { echo: "hello" })));
    const sent = request();
    const outcome = await call(endpoint, { request: sent });
    assert.ok(outcome.ok, outcome.ok ? undefined : outcome.message);
    const last = received.at(-1)!;
    assert.deepEqual([last.path, last.signed, last.body], ["/execute", true, sent]);
    assert.deepEqual(outcome.output, { echo: "hello" });
    const digest = resultDigest({ escrow: escrowBindingOf(sent), resultHash: outputHash({ echo: "hello" }), units: 0n });
    assert.deepEqual([toHex(outcome.result_hash), toHex(outcome.digest), outcome.units], [toHex(outputHash({ echo: "hello" })), toHex(digest), 0n]);
    assert.ok(ed25519Verify(outcome.signature, digest, ed25519PublicKey(creatorSeed)), "settle_batch can carry this signature");
  });

  it("sends execute protocol v2: the escrow's nonce, payer, payer token account and amount, which the signature must bind with the units", async () => {
    const endpoint = await creator((req, res) => json(res, 200, signResult(creatorSeed, req, { echo: "hello" }, 7n)));
    const sent = request();
    const outcome = await call(endpoint, { request: sent });
    assert.ok(outcome.ok, outcome.ok ? undefined : outcome.message);
    const body = received.at(-1)!.body;
    assert.deepEqual(
      [body.protocol_version, body.escrow_nonce, body.payer, body.payer_token_account, body.amount_usdc],
      [2, "41", sent.payer, sent.payer_token_account, "0.250000"],
    );
    assert.equal(outcome.units, 7n);
    assert.equal(toHex(outcome.digest), toHex(resultDigest({ escrow: escrowBindingOf(sent), resultHash: outputHash({ echo: "hello" }), units: 7n })));
  });

  it("refuses as bad_signature (an InvalidSignature refund) an answer signed over the v1 digest, another escrow's, or other units", async () => {
    /** `SHA-256("agentmarket/result/v1" ‖ execution_id ‖ agent ‖ request_hash ‖ result_hash)`: what a v1 kit signs. */
    const v1Digest = (req: CreatorExecuteRequest, output: unknown) =>
      sha256(
        Buffer.concat([
          Buffer.from("agentmarket/result/v1"),
          parseExecutionId(req.execution_id)!,
          new PublicKey(req.agent).toBytes(),
          fromHex(req.request_hash),
          outputHash(output),
        ]),
      );
    const answers: [string, (req: CreatorExecuteRequest) => unknown][] = [
      ["the v1 digest", (req) => ({ ...signResult(creatorSeed, req, { echo: "x" }), signature: toHex(ed25519Sign(creatorSeed, v1Digest(req, { echo: "x" }))) })],
      ["another escrow (nonce)", (req) => signResult(creatorSeed, { ...req, escrow_nonce: "42" }, { echo: "x" })],
      ["another payer", (req) => signResult(creatorSeed, { ...req, payer: formatAddress(new Uint8Array(randomBytes(32))) }, { echo: "x" })],
      ["another amount", (req) => signResult(creatorSeed, { ...req, amount_usdc: "0.000001" }, { echo: "x" })],
      ["units it does not answer", (req) => ({ ...signResult(creatorSeed, req, { echo: "x" }, 5n), units: "6" })],
    ];
    for (const [name, answer] of answers) {
      const outcome = await call(await creator((req, res) => json(res, 200, answer(req))));
      assert.equal(outcome.ok, false, name);
      if (outcome.ok) continue;
      assert.deepEqual([name, outcome.failure, FAILURES[outcome.failure].reason], [name, "bad_signature", "InvalidSignature"]);
    }
  });

  it("refunds each failure by its own reason, never paying a result it could not verify", async () => {
    const silent = await creator(() => undefined);
    const cases: [string, () => Promise<string>, Partial<CreatorCall>, CreatorFailure, string, string][] = [
      ["signed by another key", () => creator((req, res) => json(res, 200, signResult(strangerSeed, req, { echo: "x" }))), {}, "bad_signature", "InvalidSignature", "invalid_result"],
      ["an output outside the schema", () => creator((req, res) => json(res, 200, signResult(creatorSeed, req, { echo: 7 }))), {}, "output_invalid", "OutputInvalid", "invalid_result"],
      ["another execution's answer", () => creator((req, res) => json(res, 200, signResult(creatorSeed, { ...req, execution_id: formatExecutionId(randomBytes(16)) }, { echo: "x" }))), {}, "invalid_response", "OutputInvalid", "invalid_result"],
      ["not JSON", () => creator((_req, res) => res.writeHead(200).end("<html>")), {}, "invalid_response", "OutputInvalid", "invalid_result"],
      ["a 500", () => creator((_req, res) => json(res, 500, { error: "down" })), {}, "http_error", "CreatorError", "creator_error"],
      ["a redirect", () => creator((_req, res) => res.writeHead(302, { location: "http://127.0.0.1:9/" }).end()), {}, "http_error", "CreatorError", "creator_error"],
      ["an answer past the limit", () => creator((req, res) => json(res, 200, signResult(creatorSeed, req, { echo: "x".repeat(2_000) }))), { max_response_bytes: 1_000 }, "response_too_large", "CreatorError", "creator_error"],
      ["no answer in time", async () => silent, { timeout_ms: 300 }, "timeout", "Timeout", "creator_timeout"],
      ["nothing listening", async () => "http://127.0.0.1:9", {}, "unreachable", "CreatorError", "creator_error"],
    ];
    for (const [name, endpointOf, overrides, failure, reason, code] of cases) {
      const outcome = await call(await endpointOf(), overrides);
      assert.equal(outcome.ok, false, name);
      if (outcome.ok) continue;
      assert.deepEqual([name, outcome.failure, FAILURES[outcome.failure].reason, FAILURES[outcome.failure].code], [name, failure, reason, code]);
    }
  });

  it("never calls a private address under the public policy: endpoint_not_allowed, a CreatorError refund", async () => {
    const endpoint = await creator((req, res) => json(res, 200, signResult(creatorSeed, req, { echo: "hello" })));
    const before = received.length;
    const publicPolicy = new CreatorClient({ devnet: { marketplace_signing_key: marketplaceSeed } }, "public");
    const outcome = await call(endpoint, {}, publicPolicy);
    assert.deepEqual(outcome.ok ? null : [outcome.failure, FAILURES[outcome.failure].reason], ["endpoint_not_allowed", "CreatorError"]);
    assert.equal(received.length, before, "nothing reached the address");
  });
});
