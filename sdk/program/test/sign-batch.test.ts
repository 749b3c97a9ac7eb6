// The batch digest and `POST /sign-batch`'s wire checks, against the `sign_batch` vector of
// tests/vectors/protocol.json: scripts/gen-protocol-vectors.mjs computes it with node:crypto from
// the byte layout of docs/execute-protocol.md ("The batch digest"), not with this library nor the
// program (the Rust vector test would need cargo to check a new vector).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { PublicKey } from "@solana/web3.js";

import {
  batchDigest,
  BATCH_DIGEST_DOMAIN,
  ed25519Sign,
  fromHex,
  MAX_SETTLE_BATCH,
  signBatchDigest,
  signBatchItemDigest,
  signBatchUrl,
  toHex,
  verifySignBatchResponse,
  type SignBatchRequest,
  type SignBatchResponse,
} from "../src/index.js";

interface SignBatchVector {
  request: SignBatchRequest;
  body: string;
  result_digests: string[];
  digest_preimage: string;
  digest: string;
  response: SignBatchResponse;
}

const vectors = JSON.parse(
  readFileSync(new URL("../../../tests/vectors/protocol.json", import.meta.url), "utf8"),
) as { keys: { creator: { seed: string; public_key: string } }; execute: { digest: string }; sign_batch: SignBatchVector };

const vector = vectors.sign_batch;
const agent = new PublicKey(vector.request.agent);
const creatorPublic = new PublicKey(vectors.keys.creator.public_key).toBytes();
const creatorSeed = fromHex(vectors.keys.creator.seed);

describe("batch digest (tests/vectors/protocol.json, sign_batch)", () => {
  it("the program's constants: the domain tag and at most 16 per batch", () => {
    assert.equal(new TextDecoder().decode(BATCH_DIGEST_DOMAIN), "agentmarket/result-batch/v2");
    assert.equal(MAX_SETTLE_BATCH, 16);
  });

  it("each item's result digest, the first being the execute example's", () => {
    const digests = vector.request.items.map((item) => toHex(signBatchItemDigest(vector.request.agent, item)));
    assert.deepEqual(digests, vector.result_digests);
    assert.equal(vector.result_digests[0], vectors.execute.digest);
  });

  it("the preimage: domain ‖ agent ‖ count (u32 LE) ‖ the result digests in order", () => {
    const preimage = fromHex(vector.digest_preimage);
    assert.equal(preimage.length, 27 + 32 + 4 + 32 * 3);
    assert.equal(toHex(preimage.subarray(27, 59)), toHex(agent.toBytes()));
    assert.equal(toHex(preimage.subarray(59, 63)), "03000000");
    assert.equal(toHex(preimage.subarray(63)), vector.result_digests.join(""));
  });

  it("batchDigest and signBatchDigest compute the vector's digest", () => {
    assert.equal(toHex(batchDigest(agent, vector.result_digests.map(fromHex))), vector.digest);
    assert.equal(toHex(signBatchDigest(vector.request)), vector.digest);
  });

  it("depends on the order, the count and the agent", () => {
    const digests = vector.result_digests.map(fromHex);
    const others = [
      batchDigest(agent, [...digests].reverse()),
      batchDigest(agent, digests.slice(0, 2)),
      batchDigest(new PublicKey(creatorPublic), digests),
      batchDigest(agent, []),
    ].map(toHex);
    assert.equal(new Set([vector.digest, ...others]).size, 5);
  });

  it("refuses a result digest that is not 32 bytes", () => {
    assert.throws(() => batchDigest(agent, [new Uint8Array(31)]), /resultDigests\[0\] must be 32 bytes, got 31/);
  });

  it("the vector's body is the request, and its response signs the digest with the creator's key", () => {
    assert.deepEqual(JSON.parse(vector.body), vector.request);
    assert.equal(vector.response.digest, vector.digest);
    assert.equal(toHex(ed25519Sign(creatorSeed, fromHex(vector.digest))), vector.response.signature);
  });
});

describe("verifySignBatchResponse", () => {
  const reason = (body: unknown, signingKey = creatorPublic) => {
    const check = verifySignBatchResponse(body, vector.request, signingKey);
    return check.ok ? "ok" : check.reason;
  };

  it("accepts the vector's response and returns its bytes", () => {
    const check = verifySignBatchResponse(vector.response, vector.request, creatorPublic);
    assert.ok(check.ok);
    assert.equal(toHex(check.digest), vector.digest);
    assert.equal(toHex(check.signature), vector.response.signature);
  });

  it("a signature by another key: bad_signature", () => {
    assert.equal(reason(vector.response, new Uint8Array(32).fill(9)), "bad_signature");
    const forged = toHex(ed25519Sign(new Uint8Array(32).fill(7), fromHex(vector.digest)));
    assert.equal(reason({ ...vector.response, signature: forged }), "bad_signature");
  });

  it("a digest other than the one computed from the items: digest_mismatch", () => {
    const digest = toHex(batchDigest(agent, vector.result_digests.slice(0, 2).map(fromHex)));
    const signature = toHex(ed25519Sign(creatorSeed, fromHex(digest)));
    assert.equal(reason({ digest, signature }), "digest_mismatch");
  });

  for (const [what, body] of [
    ["not an object", []],
    ["null", null],
    ["without a digest", { signature: vector.response.signature }],
    ["with an uppercase digest", { ...vector.response, digest: vector.digest.toUpperCase() }],
    ["with a short signature", { ...vector.response, signature: vector.response.signature.slice(2) }],
  ] as const) {
    it(`a body ${what}: malformed_response`, () => assert.equal(reason(body), "malformed_response"));
  }

  it("signBatchUrl keeps the endpoint's path, as executeUrl does", () => {
    assert.equal(signBatchUrl("https://agent.example/v1/").href, "https://agent.example/v1/sign-batch");
    assert.equal(signBatchUrl("https://agent.example").href, "https://agent.example/sign-batch");
  });
});
