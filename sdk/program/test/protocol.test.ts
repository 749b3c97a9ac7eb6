// The marketplace ⇄ creator protocol: every vector of tests/vectors/protocol.json (computed by
// scripts/gen-protocol-vectors.mjs with node:crypto, not with this library), then the ways a
// request or a response can be wrong.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

import { PublicKey } from "@solana/web3.js";

import {
  canonicalJson,
  DEFAULT_REQUEST_TOLERANCE_SECS,
  ed25519PublicKey,
  ed25519Sign,
  ed25519Verify,
  formatAddress,
  formatExecutionId,
  fromHex,
  listingHash,
  outputHash,
  parseAddress,
  parseDecimalU64,
  parseExecuteRequest,
  parseExecutionId,
  escrowBindingOf,
  wireEscrowOf,
  requestHash,
  requestSigningMessage,
  resultDigest,
  signRequest,
  signResult,
  toHex,
  verifyCreatorResponse,
  verifyRequestSignature,
  type CreatorExecuteRequest,
  type CreatorExecuteResponse,
  type ListingDocument,
  type RequestSignatureFailure,
} from "../src/index.js";

interface RequestSigningVector {
  name: string;
  method: string;
  path: string;
  body: string;
  timestamp_secs: number;
  body_sha256: string;
  signing_message: string;
  signing_message_hex: string;
  signature: string;
  header: string;
}

interface ProtocolVectors {
  keys: {
    marketplace: { seed: string; public_key: string };
    creator: { seed: string; public_key: string; secret_key: string };
  };
  execution_ids: { name: string; bytes: string; id: string }[];
  invalid_execution_ids: { name: string; id: string }[];
  request_signing: RequestSigningVector[];
  execute: {
    request: CreatorExecuteRequest;
    body: string;
    request_hash_canonical: string;
    request_hash: string;
    output: unknown;
    output_canonical: string;
    result_hash: string;
    digest_preimage: string;
    digest: string;
    response: CreatorExecuteResponse;
    metered: { units: string; digest_preimage: string; digest: string; response: CreatorExecuteResponse };
  };
  listing: { document: ListingDocument; canonical: string; listing_hash: string };
}

const vectors = JSON.parse(
  readFileSync(new URL("../../../tests/vectors/protocol.json", import.meta.url), "utf8"),
) as ProtocolVectors;

const marketplaceSeed = fromHex(vectors.keys.marketplace.seed);
const marketplaceKey = vectors.keys.marketplace.public_key;
const creatorSeed = fromHex(vectors.keys.creator.seed);
const creatorPublic = new PublicKey(vectors.keys.creator.public_key).toBytes();
const executeVector = vectors.execute;
const request = executeVector.request;
const signedExecute = vectors.request_signing.find((v) => v.name === "execute")!;
const otherSeed = new Uint8Array(32).fill(7);

describe("protocol vectors (tests/vectors/protocol.json)", () => {
  it("are what scripts/gen-protocol-vectors.mjs writes", () => {
    execFileSync(process.execPath, [new URL("../scripts/gen-protocol-vectors.mjs", import.meta.url).pathname, "--check"]);
  });

  it("derive both public keys from their seeds and Solana's 64-byte secret key", () => {
    assert.equal(new PublicKey(ed25519PublicKey(marketplaceSeed)).toBase58(), marketplaceKey);
    assert.equal(new PublicKey(ed25519PublicKey(creatorSeed)).toBase58(), vectors.keys.creator.public_key);
    const secretKey = fromHex(vectors.keys.creator.secret_key);
    assert.deepEqual(ed25519PublicKey(secretKey), creatorPublic);
    assert.deepEqual(toHex(secretKey.subarray(32)), toHex(creatorPublic));
  });

  describe("execution ids", () => {
    for (const v of vectors.execution_ids) {
      it(`${v.name}: ${v.id}`, () => {
        assert.equal(formatExecutionId(fromHex(v.bytes)), v.id);
        assert.equal(toHex(parseExecutionId(v.id)!), v.bytes);
      });
    }
    for (const v of vectors.invalid_execution_ids) {
      it(`refuses ${v.name}: ${JSON.stringify(v.id)}`, () => {
        assert.equal(parseExecutionId(v.id), null);
      });
    }
  });

  describe("request signing", () => {
    for (const v of vectors.request_signing) {
      it(`${v.name}: ${v.method} ${v.path}`, () => {
        const parts = { method: v.method, path: v.path, body: v.body, timestamp_secs: v.timestamp_secs };
        const message = requestSigningMessage(parts);
        assert.equal(toHex(message), v.signing_message_hex);
        assert.equal(new TextDecoder().decode(message), v.signing_message);
        assert.equal(v.signing_message.split("\n").at(-1), v.body_sha256);
        assert.equal(signRequest(marketplaceSeed, parts), v.header);
        // The body as bytes signs the same as the body as text.
        assert.equal(signRequest(marketplaceSeed, { ...parts, body: new TextEncoder().encode(v.body) }), v.header);
        const check = verifyRequestSignature(v.header, parts, { marketplace_key: marketplaceKey, now_secs: v.timestamp_secs });
        assert.deepEqual(check, { ok: true, timestamp_secs: v.timestamp_secs, signature: v.signature });
      });
    }
  });

  describe("execute", () => {
    it("the body is the request, and its request_hash is SHA-256 of canonical {task, parameters}", () => {
      assert.deepEqual(JSON.parse(executeVector.body), request);
      assert.equal(signedExecute.body, executeVector.body);
      assert.equal(canonicalJson({ task: request.task, parameters: request.parameters }), executeVector.request_hash_canonical);
      assert.equal(toHex(requestHash(request.task, request.parameters)), executeVector.request_hash);
      assert.equal(request.request_hash, executeVector.request_hash);
    });

    it("the result hash, the digest's preimage and the digest", () => {
      assert.equal(canonicalJson(executeVector.output), executeVector.output_canonical);
      assert.equal(toHex(outputHash(executeVector.output)), executeVector.result_hash);
      const preimage = fromHex(executeVector.digest_preimage);
      assert.equal(preimage.length, 221);
      assert.equal(new TextDecoder().decode(preimage.subarray(0, 21)), "agentmarket/result/v2");
      assert.equal(toHex(preimage.subarray(21, 37)), toHex(parseExecutionId(request.execution_id)!));
      assert.equal(toHex(preimage.subarray(69, 77)), "2900000000000000", "the nonce, u64 LE");
      assert.equal(toHex(preimage.subarray(141, 149)), "90d0030000000000", "the amount, u64 LE");
      assert.equal(toHex(preimage.subarray(213)), "0000000000000000", "no units: 0");
      const escrow = escrowBindingOf(request);
      const resultHash = fromHex(executeVector.result_hash);
      assert.equal(toHex(resultDigest({ escrow, resultHash, units: 0n })), executeVector.digest);
      const metered = executeVector.metered;
      assert.equal(toHex(resultDigest({ escrow, resultHash, units: BigInt(metered.units) })), metered.digest);
      assert.equal(toHex(fromHex(metered.digest_preimage).subarray(213)), "ffffffffffffffff");
    });

    it("the request carries the escrow: escrowBindingOf reads it, wireEscrowOf writes it back", () => {
      const escrow = escrowBindingOf(request);
      assert.equal(escrow.nonce, 41n);
      assert.equal(escrow.amountUsdc, 250_000n);
      const { protocol_version, network, task, parameters, deadline, ...wire } = request;
      assert.deepEqual([protocol_version, network, typeof task, typeof parameters, typeof deadline], [2, "devnet", "string", "object", "string"]);
      assert.deepEqual(wireEscrowOf(escrow), wire);
      const parsed = parseExecuteRequest(JSON.parse(executeVector.body));
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.escrow, escrow);
    });

    it("a metered answer carries its units and signs them", () => {
      const metered = executeVector.metered;
      assert.deepEqual(signResult(creatorSeed, request, executeVector.output, BigInt(metered.units)), metered.response);
      const check = verifyCreatorResponse(metered.response, { ...request, signing_key: creatorPublic });
      assert.ok(check.ok);
      assert.equal(check.units, BigInt(metered.units));
      assert.equal(toHex(check.digest), metered.digest);
    });

    it("a metered request carries its terms, and an answer above its max_units fails verification though signed", () => {
      const terms = { ...request, max_units: "7", price_per_unit_usdc: "0.001000" };
      const parsed = parseExecuteRequest(terms);
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.metered, { maxUnits: 7n, pricePerUnitUsdc: 1_000n });
      assert.deepEqual(parseExecuteRequest(request), { ok: true, request, escrow: parsed.escrow, metered: null });
      for (const [body, message] of [
        [{ ...request, max_units: "7" }, "a metered request carries both max_units and price_per_unit_usdc"],
        [{ ...terms, max_units: "07" }, "max_units is not the decimal string of a u64"],
        [{ ...terms, price_per_unit_usdc: "0.001" }, "price_per_unit_usdc is not USDC with 6 decimals"],
      ] as const) {
        assert.deepEqual(parseExecuteRequest(body), { ok: false, reason: "malformed_request", message });
      }
      const expected = { ...request, signing_key: creatorPublic };
      const within = verifyCreatorResponse(signResult(creatorSeed, request, executeVector.output, 7n), { ...expected, max_units: "7" });
      assert.ok(within.ok);
      const above = verifyCreatorResponse(signResult(creatorSeed, request, executeVector.output, 8n), { ...expected, max_units: "7" });
      assert.deepEqual(above, { ok: false, reason: "units_above_maximum", message: "units 8 are above the call's max_units 7" });
    });

    it("signResult answers the response byte for byte, from the seed or the 64-byte secret key", () => {
      assert.deepEqual(signResult(creatorSeed, request, executeVector.output), executeVector.response);
      assert.deepEqual(
        signResult(fromHex(vectors.keys.creator.secret_key), request, executeVector.output),
        executeVector.response,
      );
    });

    it("verifyCreatorResponse accepts the response", () => {
      const check = verifyCreatorResponse(executeVector.response, { ...request, signing_key: creatorPublic });
      assert.ok(check.ok);
      assert.equal(toHex(check.result_hash), executeVector.result_hash);
      assert.equal(toHex(check.digest), executeVector.digest);
      assert.equal(check.units, 0n, "no units: 0");
      assert.equal(toHex(check.signature), executeVector.response.signature);
      assert.deepEqual(check.output, executeVector.output);
    });
  });

  it("docs/execute-protocol.md quotes them in its worked example", () => {
    const doc = readFileSync(new URL("../../../docs/execute-protocol.md", import.meta.url), "utf8");
    const quoted = [
      vectors.keys.marketplace.public_key,
      vectors.keys.creator.public_key,
      signedExecute.signing_message,
      signedExecute.header,
      executeVector.request_hash,
      executeVector.request_hash_canonical,
      executeVector.output_canonical,
      executeVector.result_hash,
      executeVector.digest,
      executeVector.response.signature,
      ...Object.values(request).filter((v): v is string => typeof v === "string"),
    ];
    for (const value of quoted) assert.ok(doc.includes(value), value);
    const preimage = doc.match(/digest's 221 input bytes are\n\n```\n([\s\S]*?)```/)![1]!;
    assert.equal(preimage.split("\n").map((line) => line.split(" ")[0]).join(""), executeVector.digest_preimage);
  });

  it("listing hash", () => {
    const { document, canonical, listing_hash } = vectors.listing;
    assert.equal(canonicalJson(document), canonical);
    assert.equal(toHex(listingHash(document)), listing_hash);
  });
});

describe("request signature checks", () => {
  const parts = {
    method: signedExecute.method,
    path: signedExecute.path,
    body: signedExecute.body,
  };
  const t = signedExecute.timestamp_secs;
  const options = { marketplace_key: marketplaceKey, now_secs: t };
  const reason = (header: string | undefined, request = parts, opts: Parameters<typeof verifyRequestSignature>[2] = options) => {
    const check = verifyRequestSignature(header, request, opts);
    return check.ok ? "ok" : check.reason;
  };

  it("accepts the vector's header, with spaces around its fields and in any field order", () => {
    assert.equal(reason(signedExecute.header), "ok");
    const [tField, keyField, sigField] = signedExecute.header.split(",");
    assert.equal(reason(`${sigField}, ${tField} ,${keyField}`), "ok");
  });

  describe("a tampered request is bad_signature", () => {
    const cases: [string, typeof parts][] = [
      ["body", { ...parts, body: signedExecute.body.replace('"top_n":3', '"top_n":4') }],
      ["body with a trailing newline", { ...parts, body: signedExecute.body + "\n" }],
      ["path", { ...parts, path: "/execute/" }],
      ["query string", { ...parts, path: "/execute?x=1" }],
      ["method", { ...parts, method: "PUT" }],
    ];
    for (const [what, tampered] of cases) {
      it(what, () => assert.equal(reason(signedExecute.header, tampered), "bad_signature"));
    }
    it("timestamp", () => {
      assert.equal(reason(signedExecute.header.replace(`t=${t}`, `t=${t + 1}`)), "bad_signature");
    });
    it("signature", () => {
      const sig = signedExecute.signature;
      const flipped = sig.slice(0, 10) + (sig[10] === "0" ? "1" : "0") + sig.slice(11);
      assert.equal(reason(signedExecute.header.replace(sig, flipped)), "bad_signature");
    });
  });

  describe("stale_timestamp", () => {
    const tolerance = DEFAULT_REQUEST_TOLERANCE_SECS;
    it("accepts the edges of the window", () => {
      assert.equal(reason(signedExecute.header, parts, { ...options, now_secs: t + tolerance }), "ok");
      assert.equal(reason(signedExecute.header, parts, { ...options, now_secs: t - tolerance }), "ok");
    });
    it("refuses a request signed too long ago", () => {
      assert.equal(reason(signedExecute.header, parts, { ...options, now_secs: t + tolerance + 1 }), "stale_timestamp");
    });
    it("refuses a request signed too far in the future", () => {
      assert.equal(reason(signedExecute.header, parts, { ...options, now_secs: t - tolerance - 1 }), "stale_timestamp");
    });
    it("follows tolerance_secs", () => {
      assert.equal(reason(signedExecute.header, parts, { ...options, now_secs: t + 11, tolerance_secs: 10 }), "stale_timestamp");
      assert.equal(reason(signedExecute.header, parts, { ...options, now_secs: t + 10, tolerance_secs: 10 }), "ok");
    });
  });

  describe("keys", () => {
    it("a header naming another key is unexpected_key", () => {
      const header = signRequest(otherSeed, { ...parts, timestamp_secs: t });
      assert.equal(reason(header), "unexpected_key");
    });
    it("another key's signature under the marketplace's name is bad_signature", () => {
      const forged = signRequest(otherSeed, { ...parts, timestamp_secs: t }).replace(
        /key=[^,]+/,
        `key=${marketplaceKey}`,
      );
      assert.equal(reason(forged), "bad_signature");
    });
  });

  describe("malformed headers", () => {
    const sig = signedExecute.signature;
    const cases: [string, string | undefined, RequestSignatureFailure][] = [
      ["absent", undefined, "missing_signature"],
      ["empty", "", "missing_signature"],
      ["not key=value", "garbage", "malformed_signature"],
      ["a field with no name", `=1,t=${t},key=${marketplaceKey},sig=${sig}`, "malformed_signature"],
      ["a trailing comma", `${signedExecute.header},`, "malformed_signature"],
      ["no t", `key=${marketplaceKey},sig=${sig}`, "malformed_signature"],
      ["no key", `t=${t},sig=${sig}`, "malformed_signature"],
      ["no sig", `t=${t},key=${marketplaceKey}`, "malformed_signature"],
      ["t not decimal", `t=0x${t.toString(16)},key=${marketplaceKey},sig=${sig}`, "malformed_signature"],
      ["t negative", `t=-${t},key=${marketplaceKey},sig=${sig}`, "malformed_signature"],
      ["t with a leading zero", `t=0${t},key=${marketplaceKey},sig=${sig}`, "malformed_signature"],
      ["t with 13 digits", `t=1${"0".repeat(12)},key=${marketplaceKey},sig=${sig}`, "malformed_signature"],
      ["sig in capitals", `t=${t},key=${marketplaceKey},sig=${sig.toUpperCase()}`, "malformed_signature"],
      ["sig too short", `t=${t},key=${marketplaceKey},sig=${sig.slice(2)}`, "malformed_signature"],
      ["sig in base58", `t=${t},key=${marketplaceKey},sig=${marketplaceKey}`, "malformed_signature"],
      ["a repeated field", `${signedExecute.header},t=${t}`, "malformed_signature"],
      ["two headers joined by Node", `${signedExecute.header}, ${signedExecute.header}`, "malformed_signature"],
    ];
    for (const [what, header, expected] of cases) {
      it(`${what}: ${expected}`, () => assert.equal(reason(header), expected));
    }
  });

  it("signRequest refuses a timestamp the header cannot carry", () => {
    for (const timestamp_secs of [-1, Number.NaN, Infinity, 1e12]) {
      assert.throws(() => signRequest(marketplaceSeed, { ...parts, timestamp_secs }), RangeError);
    }
  });
});

describe("creator response checks", () => {
  const expected = { ...request, signing_key: creatorPublic };
  const response = executeVector.response;
  const reason = (body: unknown, against = expected) => {
    const check = verifyCreatorResponse(body, against);
    return check.ok ? "ok" : check.reason;
  };
  const otherId = formatExecutionId(new Uint8Array(16).fill(9));

  it("wrong execution id: execution_id_mismatch", () => {
    assert.equal(reason({ ...response, execution_id: otherId }), "execution_id_mismatch");
  });

  it("a result hash that is not the output's: result_hash_mismatch", () => {
    assert.equal(reason({ ...response, result_hash: toHex(outputHash({ other: true })) }), "result_hash_mismatch");
    assert.equal(reason({ ...response, output: { ...(response.output as object), words: 6 } }), "result_hash_mismatch");
  });

  it("a signature by another key: bad_signature", () => {
    assert.equal(reason(signResult(otherSeed, request, executeVector.output)), "bad_signature");
  });

  it("a signature replayed from another execution: bad_signature", () => {
    const other = { ...request, execution_id: otherId };
    const answer = signResult(creatorSeed, other, executeVector.output);
    assert.equal(reason(answer, { ...expected, execution_id: otherId }), "ok");
    assert.equal(reason({ ...answer, execution_id: request.execution_id }), "bad_signature");
  });

  it("a signature over another agent or request hash: bad_signature", () => {
    const otherAgent = new PublicKey(new Uint8Array(32).fill(3)).toBase58();
    assert.equal(reason(signResult(creatorSeed, { ...request, agent: otherAgent }, executeVector.output)), "bad_signature");
    const otherHash = toHex(requestHash("another task", {}));
    assert.equal(reason(signResult(creatorSeed, { ...request, request_hash: otherHash }, executeVector.output)), "bad_signature");
  });

  it("a signature given for another escrow of the same execution id: bad_signature", () => {
    const otherKey = new PublicKey(new Uint8Array(32).fill(4)).toBase58();
    const others: [string, Partial<CreatorExecuteRequest>][] = [
      ["nonce", { escrow_nonce: "42" }],
      ["payer", { payer: otherKey }],
      ["payer token account", { payer_token_account: otherKey }],
      ["amount", { amount_usdc: "0.250001" }],
    ];
    for (const [what, fields] of others) {
      assert.equal(reason(signResult(creatorSeed, { ...request, ...fields }, executeVector.output)), "bad_signature", what);
      assert.equal(reason(response, { ...expected, ...fields }), "bad_signature", `${what}, checked against the other escrow`);
    }
  });

  it("units other than the signed ones: bad_signature", () => {
    assert.equal(reason({ ...response, units: "1" }), "bad_signature");
    assert.equal(reason({ ...executeVector.metered.response, units: undefined }), "malformed_response");
    const { units: _, ...withoutUnits } = executeVector.metered.response;
    assert.equal(reason(withoutUnits), "bad_signature", "absent units are 0, not the signed ones");
  });

  it("units that are not the decimal string of a u64: malformed_response, with the message", () => {
    for (const units of [1, "-1", "01", "1.5", " 1", "18446744073709551616", "", null]) {
      const check = verifyCreatorResponse({ ...response, units }, expected);
      assert.deepEqual(check, { ok: false, reason: "malformed_response", message: "units is not the decimal string of a u64" }, JSON.stringify(units));
    }
    assert.equal(reason({ ...response, units: "0" }), "ok", "explicit 0 is the same as absent");
  });

  for (const [what, body] of [
    ["null", null],
    ["an array", [response]],
    ["a string", JSON.stringify(response)],
    ["a number", 200],
  ] as [string, unknown][]) {
    it(`a body that is ${what}: malformed_response`, () => assert.equal(reason(body), "malformed_response"));
  }

  it("missing or mistyped fields: malformed_response", () => {
    const { output: _, ...withoutOutput } = response;
    assert.equal(reason(withoutOutput), "malformed_response");
    for (const field of ["execution_id", "result_hash", "signature"] as const) {
      const { [field]: _omitted, ...rest } = response;
      assert.equal(reason(rest), "malformed_response", `without ${field}`);
      assert.equal(reason({ ...response, [field]: 1 }), "malformed_response", `${field} a number`);
    }
  });

  it("non-hex or mis-sized hashes and signatures: malformed_response", () => {
    const bad = [
      { result_hash: response.result_hash.toUpperCase() },
      { result_hash: response.result_hash.slice(2) },
      { result_hash: `0x${response.result_hash.slice(2)}` },
      { signature: response.signature.toUpperCase() },
      { signature: response.signature.slice(2) },
      { signature: response.signature.replace(/^../, "zz") },
    ];
    for (const fields of bad) assert.equal(reason({ ...response, ...fields }), "malformed_response", JSON.stringify(fields));
  });

  it("an output that has no canonical JSON: malformed_response", () => {
    assert.equal(reason({ ...response, output: { n: Number.NaN } }), "malformed_response");
  });
});

describe("execute request checks", () => {
  const body = JSON.parse(executeVector.body) as Record<string, unknown>;
  const failure = (value: unknown) => {
    const check = parseExecuteRequest(value);
    return check.ok ? "ok" : `${check.reason}: ${check.message}`;
  };

  it("refuses another protocol version, naming it", () => {
    assert.equal(failure({ ...body, protocol_version: 1 }), "unsupported_protocol_version: protocol_version is 1; this creator speaks 2");
    assert.equal(failure({ ...body, protocol_version: "2" }), 'unsupported_protocol_version: protocol_version is "2"; this creator speaks 2');
    const { protocol_version: _, ...v1 } = body;
    assert.equal(failure(v1), "unsupported_protocol_version: protocol_version is missing; this creator speaks 2");
  });

  it("refuses malformed escrow fields with the field's name", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ escrow_nonce: 41 }, "escrow_nonce is not the decimal string of a u64: 41"],
      [{ escrow_nonce: "18446744073709551616" }, "escrow_nonce is not the decimal string of a u64: 18446744073709551616"],
      [{ payer: "not-base58" }, "payer is not a base58 address: not-base58"],
      [{ payer_token_account: undefined }, "payer_token_account is not a base58 address: undefined"],
      [{ agent: "1" }, "agent is not a base58 address: 1"],
      [{ amount_usdc: "0.25" }, "amount_usdc is not USDC with 6 decimals: 0.25"],
      [{ amount_usdc: 250000 }, "amount_usdc is not USDC with 6 decimals: 250000"],
      [{ request_hash: "AB" }, "request_hash is not 64 lowercase hex characters: AB"],
      [{ execution_id: "exec_" }, "execution_id is not an execution id: exec_"],
    ];
    for (const [fields, message] of cases) assert.equal(failure({ ...body, ...fields }), `malformed_request: ${message}`);
  });

  it("refuses a body that is not a request", () => {
    assert.equal(failure([]), "malformed_request: the request body is not a JSON object");
    assert.equal(failure({ ...body, task: 3 }), "malformed_request: task is missing or not a string");
    assert.equal(failure({ ...body, parameters: [] }), "malformed_request: parameters is not a JSON object");
  });

  it("parseDecimalU64 takes canonical decimal u64s only", () => {
    assert.equal(parseDecimalU64("0"), 0n);
    assert.equal(parseDecimalU64("18446744073709551615"), (1n << 64n) - 1n);
    for (const bad of ["", "00", "+1", "1e3", "18446744073709551616", 5]) assert.equal(parseDecimalU64(bad), null, String(bad));
  });

  it("signResult refuses a request it cannot bind", () => {
    assert.throws(() => signResult(creatorSeed, { ...request, escrow_nonce: "x" }, {}), {
      name: "TypeError",
      message: "escrow_nonce is not the decimal string of a u64: x",
    });
  });
});

describe("execution ids and addresses", () => {
  it("formatExecutionId refuses anything but 16 bytes", () => {
    assert.throws(() => formatExecutionId(new Uint8Array(15)), RangeError);
    assert.throws(() => formatExecutionId(new Uint8Array(17)), RangeError);
  });

  it("parseExecutionId refuses non-strings and returns a copy", () => {
    assert.equal(parseExecutionId(42 as unknown as string), null);
    assert.equal(parseExecutionId(undefined as unknown as string), null);
    const bytes = parseExecutionId(request.execution_id)!;
    bytes.fill(0);
    assert.notEqual(toHex(parseExecutionId(request.execution_id)!), toHex(bytes));
  });

  it("formatAddress writes 32 bytes in base58, as parseAddress reads them", () => {
    assert.equal(formatAddress(creatorPublic), vectors.keys.creator.public_key);
    assert.equal(formatAddress(new Uint8Array(32)), "11111111111111111111111111111111");
    assert.throws(() => formatAddress(new Uint8Array(16)), RangeError);
  });

  it("parseAddress takes exactly 32 canonical base58 bytes", () => {
    assert.equal(toHex(parseAddress(vectors.keys.creator.public_key)!), toHex(creatorPublic));
    assert.equal(toHex(parseAddress("11111111111111111111111111111111")!), "00".repeat(32));
    for (const bad of [
      "",
      "1111111111111111111111111111111", // 31 bytes
      "111111111111111111111111111111111", // 33 bytes
      `${vectors.keys.creator.public_key} `,
      vectors.keys.creator.public_key.replace(/.$/, "0"),
      request.execution_id,
    ]) {
      assert.equal(parseAddress(bad), null, bad);
    }
  });
});

describe("Ed25519 helpers", () => {
  it("refuse secret keys that are neither 32 nor 64 bytes", () => {
    assert.throws(() => ed25519PublicKey(new Uint8Array(31)), RangeError);
    assert.throws(() => ed25519Sign(new Uint8Array(33), new Uint8Array(1)), RangeError);
  });

  it("verify only well-sized inputs", () => {
    const signature = ed25519Sign(creatorSeed, fromHex(executeVector.digest));
    assert.ok(ed25519Verify(signature, fromHex(executeVector.digest), creatorPublic));
    assert.equal(ed25519Verify(signature.subarray(1), fromHex(executeVector.digest), creatorPublic), false);
    assert.equal(ed25519Verify(signature, fromHex(executeVector.digest), creatorPublic.subarray(1)), false);
  });
});

describe("listingHash", () => {
  it("hashes exactly the five listing fields", () => {
    const document = vectors.listing.document;
    const withExtra = { ...document, version: 2 } as ListingDocument;
    assert.equal(toHex(listingHash(withExtra)), vectors.listing.listing_hash);
    assert.notEqual(toHex(listingHash({ ...document, tags: [...document.tags].reverse() })), vectors.listing.listing_hash);
  });
});
