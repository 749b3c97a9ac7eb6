// POST /sign-batch over real HTTP on 127.0.0.1, through the node:http listener and the fastify
// plugin: the batch signature over results the service signed through /execute, and every refusal.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";

import {
  ed25519Verify,
  fromHex,
  parseAddress,
  parseExecutionId,
  signResult,
  toHex,
  type CreatorExecuteRequest,
  type CreatorExecuteResponse,
  type SignBatchItem,
} from "@agent-market/program";

import { createAgentService, type AgentServiceOptions } from "../src/index.js";
import {
  creatorPublicKey,
  creatorSeed,
  executeRequest,
  marketplaceKey,
  nowSecs,
  otherAgent,
  post,
  send,
  servedAgent,
  servedOnBothTransports,
  signedCall,
  strangerSeed,
  type Answer,
} from "./helpers.js";

const options: AgentServiceOptions<{ text: string }> = {
  signingKey: creatorSeed,
  marketplaceKey,
  agents: [servedAgent],
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  outputSchema: { type: "object", properties: { echo: { type: "string" } }, required: ["echo"] },
  handler: ({ parameters }) => ({ echo: parameters.text }),
};

const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};
const utf8 = (text: string) => new TextEncoder().encode(text);

const u64Le = (value: bigint) => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value, true);
  return out;
};

/** The v2 result digest of docs/execute-protocol.md, computed here without the library. */
function digestOf(item: SignBatchItem, agent = servedAgent): Uint8Array {
  const [whole, fraction] = item.amount_usdc.split(".");
  return sha256(
    utf8("agentmarket/result/v2"),
    parseExecutionId(item.execution_id)!,
    parseAddress(agent)!,
    u64Le(BigInt(item.escrow_nonce)),
    parseAddress(item.payer)!,
    parseAddress(item.payer_token_account)!,
    u64Le(BigInt(whole!) * 1_000_000n + BigInt(fraction!)),
    fromHex(item.request_hash),
    fromHex(item.result_hash),
    u64Le(BigInt(item.units)),
  );
}

/** The batch digest of docs/execute-protocol.md, computed here without the library. */
function batchDigestOf(items: SignBatchItem[], agent = servedAgent): Uint8Array {
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, items.length, true);
  return sha256(utf8("agentmarket/result-batch/v2"), parseAddress(agent)!, count, ...items.map((i) => digestOf(i, agent)));
}

/** An item as the marketplace builds it from `/execute`'s answer to a request for `agent`. */
function itemOf(request: CreatorExecuteRequest, response: CreatorExecuteResponse): SignBatchItem {
  return {
    execution_id: response.execution_id,
    escrow_nonce: request.escrow_nonce,
    payer: request.payer,
    payer_token_account: request.payer_token_account,
    amount_usdc: request.amount_usdc,
    request_hash: request.request_hash,
    result_hash: response.result_hash,
    units: response.units ?? "0",
    signature: response.signature,
  };
}

/** An item signed by `seed` without a call: what a service with that key would have answered. */
function signedItem(text: string, seed = creatorSeed, agent = servedAgent): SignBatchItem {
  const request = executeRequest("echo", { text }, { agent });
  return itemOf(request, signResult(seed, request, { echo: text }));
}

function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body.error.code, code, answer.text);
  assert.equal(typeof answer.body.error.message, "string");
}

describe("POST /sign-batch", () => {
  const served = servedOnBothTransports(options);

  for (const [name, url] of [
    ["node:http", () => served.nodeUrl],
    ["fastify", () => served.fastifyUrl],
  ] as const) {
    describe(`over ${name}`, () => {
      it("signs the batch digest of results it answered through /execute, which verifies with its key", async () => {
        const items: SignBatchItem[] = [];
        for (const text of ["one", "two", "three"]) {
          const request = executeRequest("echo", { text });
          const answer = await post(url(), "/execute", request);
          assert.equal(answer.status, 200, answer.text);
          items.push(itemOf(request, answer.body as CreatorExecuteResponse));
        }
        const answer = await post(url(), "/sign-batch", { agent: servedAgent, items });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.contentType, "application/json; charset=utf-8");
        assert.deepEqual(Object.keys(answer.body).sort(), ["digest", "signature"]);
        const expected = batchDigestOf(items);
        assert.equal(answer.body.digest, toHex(expected));
        assert.ok(ed25519Verify(fromHex(answer.body.signature), expected, creatorPublicKey));
      });

      it("signs a batch of one and of 16, the most settle_batch takes", async () => {
        for (const size of [1, 16]) {
          const items = Array.from({ length: size }, (_, i) => signedItem(`item ${i}`));
          const answer = await post(url(), "/sign-batch", { agent: servedAgent, items });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(answer.body.digest, toHex(batchDigestOf(items)));
          assert.ok(ed25519Verify(fromHex(answer.body.signature), batchDigestOf(items), creatorPublicKey));
        }
      });

      describe("refuses results it did not sign: 422 unknown_result_signature, no signature", () => {
        it("an item signed by another key", async () => {
          const items = [signedItem("mine"), signedItem("theirs", strangerSeed)];
          const answer = await post(url(), "/sign-batch", { agent: servedAgent, items });
          assertError(answer, 422, "unknown_result_signature");
          assert.match(answer.body.error.message, /^items\[1\]/);
          assert.equal(answer.body.signature, undefined);
        });

        it("a tampered result hash", async () => {
          const item = signedItem("paid");
          const tampered = { ...item, result_hash: toHex(new Uint8Array(32).fill(0xee)) };
          assertError(await post(url(), "/sign-batch", { agent: servedAgent, items: [tampered] }), 422, "unknown_result_signature");
        });

        it("a tampered request hash, and a signature moved to another execution", async () => {
          const [first, second] = [signedItem("a"), signedItem("b")];
          const items = [{ ...first!, request_hash: second!.request_hash }];
          assertError(await post(url(), "/sign-batch", { agent: servedAgent, items }), 422, "unknown_result_signature");
          const moved = [{ ...first!, signature: second!.signature }];
          assertError(await post(url(), "/sign-batch", { agent: servedAgent, items: moved }), 422, "unknown_result_signature");
        });
      });

      describe("refuses bodies it cannot use: 400", () => {
        it("batch_too_large: 17 items", async () => {
          const items = Array.from({ length: 17 }, (_, i) => signedItem(`item ${i}`));
          assertError(await post(url(), "/sign-batch", { agent: servedAgent, items }), 400, "batch_too_large");
        });

        it("empty_batch: no items", async () => {
          assertError(await post(url(), "/sign-batch", { agent: servedAgent, items: [] }), 400, "empty_batch");
        });

        it("duplicate_execution: one execution twice", async () => {
          const item = signedItem("twice");
          assertError(await post(url(), "/sign-batch", { agent: servedAgent, items: [item, item] }), 400, "duplicate_execution");
        });

        it("invalid_json", async () => {
          assertError(await post(url(), "/sign-batch", "{not json"), 400, "invalid_json");
        });

        const item = signedItem("shape");
        for (const [what, body] of [
          ["a body that is an array", [item]],
          ["agent missing", { items: [item] }],
          ["agent not base58", { agent: "0OIl", items: [item] }],
          ["items not an array", { agent: servedAgent, items: item }],
          ["an item that is not an object", { agent: servedAgent, items: ["x"] }],
          ["an execution id without its prefix", { agent: servedAgent, items: [{ ...item, execution_id: item.execution_id.slice(5) }] }],
          ["a result hash in capitals", { agent: servedAgent, items: [{ ...item, result_hash: item.result_hash.toUpperCase() }] }],
          ["a short request hash", { agent: servedAgent, items: [{ ...item, request_hash: item.request_hash.slice(2) }] }],
          ["a base58 signature", { agent: servedAgent, items: [{ ...item, signature: "3".repeat(88) }] }],
        ] as const) {
          it(`invalid_request: ${what}`, async () => {
            assertError(await post(url(), "/sign-batch", body), 400, "invalid_request");
          });
        }
      });

      describe("authenticates the marketplace as /execute does", () => {
        const body = () => ({ agent: servedAgent, items: [signedItem("auth")] });

        it("401 missing_signature: an unsigned request", async () => {
          assertError(await post(url(), "/sign-batch", body(), { header: null }), 401, "missing_signature");
        });

        it("401 unexpected_key: signed by another key", async () => {
          assertError(await post(url(), "/sign-batch", body(), { signer: strangerSeed }), 401, "unexpected_key");
        });

        it("401 bad_signature: signed for /execute, sent to /sign-batch", async () => {
          assertError(await post(url(), "/sign-batch", body(), { signedPath: "/execute" }), 401, "bad_signature");
        });

        it("409 replayed_request: the same signed request twice", async () => {
          const call = signedCall("/sign-batch", JSON.stringify(body()));
          assert.equal((await send(url(), call)).status, 200);
          assertError(await send(url(), call), 409, "replayed_request");
        });

        it("403 agent_not_served: another agent, even with results signed for it by this key", async () => {
          const items = [signedItem("clone", creatorSeed, otherAgent)];
          assertError(await post(url(), "/sign-batch", { agent: otherAgent, items }), 403, "agent_not_served");
        });
      });
    });
  }

  it("the node listener and the fastify plugin answer with the same bytes", async () => {
    const item = signedItem("same");
    for (const body of [{ agent: servedAgent, items: [item] }, { agent: servedAgent, items: [] }]) {
      // Signed seconds earlier than the per-transport tests sign the same bodies, which would be replays.
      const call = signedCall("/sign-batch", JSON.stringify(body), { timestamp_secs: nowSecs() - 7 });
      const [fromNode, fromFastify] = [await send(served.nodeUrl, call), await send(served.fastifyUrl, call)];
      assert.equal(fromNode.status, fromFastify.status);
      assert.equal(fromNode.contentType, fromFastify.contentType);
      assert.equal(fromNode.text, fromFastify.text);
    }
  });

  it("the node listener answers 405 to GET /sign-batch", async () => {
    const answer = await send(served.nodeUrl, { method: "GET", path: "/sign-batch", body: "", headers: {} });
    assertError(answer, 405, "method_not_allowed");
  });
});

describe("handleSignBatch of a service answering for two agents", () => {
  it("refuses a result signed for one agent in a batch of the other", async () => {
    const service = createAgentService({ ...options, agents: [servedAgent, otherAgent] });
    const forServed = signedItem("for the served agent");
    const call = signedCall("/sign-batch", JSON.stringify({ agent: otherAgent, items: [forServed] }));
    const answer = await service.handleSignBatch({ ...call, body: new TextEncoder().encode(call.body as string) });
    assert.equal(answer.status, 422);
    assert.equal((answer.body as { error: { code: string } }).error.code, "unknown_result_signature");
    const forOther = signedItem("for the other agent", creatorSeed, otherAgent);
    const again = signedCall("/sign-batch", JSON.stringify({ agent: otherAgent, items: [forOther] }));
    const signed = await service.handleSignBatch({ ...again, body: new TextEncoder().encode(again.body as string) });
    assert.equal(signed.status, 200);
  });
});
