// Writes tests/vectors/protocol.json, the test vectors of the marketplace ⇄ creator protocol
// (docs/execute-protocol.md). Every value is computed here from fixed inputs with node:crypto
// alone, not with src/protocol.ts, so test/protocol.test.ts checks the library against a second
// implementation. Ed25519 (RFC 8032) is deterministic, hence so is the file.
// Usage: node scripts/gen-protocol-vectors.mjs [--check]
import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const outPath = fileURLToPath(new URL("../../../tests/vectors/protocol.json", import.meta.url));

const REQUEST_SIGNATURE_DOMAIN = "agentmarket/request/v1";
const RESULT_DIGEST_DOMAIN = "agentmarket/result/v2";
const BATCH_DIGEST_DOMAIN = "agentmarket/result-batch/v2";

const hex = (bytes) => Buffer.from(bytes).toString("hex");
const sha256 = (bytes) => createHash("sha256").update(bytes).digest();
const utf8 = (text) => Buffer.from(text, "utf8");
/** Bytes start, start+1, … (mod 256): fixed, distinct, and readable in a hex dump. */
const counting = (start, length) => Buffer.from(Array.from({ length }, (_, i) => (start + i) % 256));

const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function base58(bytes) {
  let n = BigInt("0x" + (hex(bytes) || "0"));
  let digits = "";
  while (n > 0n) {
    digits = BASE58_ALPHABET[Number(n % 58n)] + digits;
    n /= 58n;
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return "1".repeat(zeros) + digits;
}

/** node:crypto Ed25519 private key from a 32-byte seed (PKCS#8 DER prefix ‖ seed). */
function privateKey(seed) {
  const prefix = Buffer.from("302e020100300506032b657004220420", "hex");
  return createPrivateKey({ key: Buffer.concat([prefix, seed]), format: "der", type: "pkcs8" });
}

function publicKeyBytes(seed) {
  // The SPKI DER of an Ed25519 key is a 12-byte prefix and the 32-byte key.
  return createPublicKey(privateKey(seed)).export({ format: "der", type: "spki" }).subarray(12);
}

const ed25519Sign = (seed, message) => sign(null, message, privateKey(seed));

/**
 * RFC 8785 for the JSON data below: sorting keys with the default (UTF-16 code unit) order and
 * JSON.stringify's number and string forms are exactly the scheme's, for any well-formed strings.
 */
function canonicalJson(value) {
  const sorted = (v) => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.keys(v).sort().map((key) => [key, sorted(v[key])]));
    }
    return v;
  };
  return JSON.stringify(sorted(value));
}

const formatExecutionId = (bytes) => "exec_" + base58(bytes);
const u64Le = (value) => {
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(BigInt(value));
  return out;
};
/** USDC base units as the wire's 6-decimal string. */
const usdc = (baseUnits) => `${baseUnits / 1_000_000n}.${String(baseUnits % 1_000_000n).padStart(6, "0")}`;

const marketplaceSeed = counting(0x00, 32);
const creatorSeed = counting(0x20, 32);
const marketplacePublic = publicKeyBytes(marketplaceSeed);
const creatorPublic = publicKeyBytes(creatorSeed);
const agentBytes = counting(0xa0, 32);
const executionIdBytes = counting(0x40, 16);
const leadingZeros = Buffer.concat([Buffer.alloc(2), counting(0xf0, 14)]);
const timestampSecs = 1767225600; // 2026-01-01T00:00:00Z
const payerBytes = counting(0xc0, 32);
const payerTokenAccountBytes = counting(0xe0, 32);

function requestSigningCase(name, { method, path, body, timestamp_secs }) {
  const bodySha256 = hex(sha256(utf8(body)));
  const message = [REQUEST_SIGNATURE_DOMAIN, String(timestamp_secs), method.toUpperCase(), path, bodySha256].join("\n");
  const signature = hex(ed25519Sign(marketplaceSeed, utf8(message)));
  return {
    name,
    method,
    path,
    body,
    timestamp_secs,
    body_sha256: bodySha256,
    signing_message: message,
    signing_message_hex: hex(utf8(message)),
    signature,
    header: `t=${timestamp_secs},key=${base58(marketplacePublic)},sig=${signature}`,
  };
}

const task = "Summarize the text";
const parameters = { text: "Naïve café ☕: déjà vu.", top_n: 3, stopwords: true };
const requestHashCanonical = canonicalJson({ task, parameters });
const requestHash = hex(sha256(utf8(requestHashCanonical)));
const escrowNonce = 41n;
const amountUsdc = 250_000n;
const executeRequest = {
  protocol_version: 2,
  execution_id: formatExecutionId(executionIdBytes),
  agent: base58(agentBytes),
  escrow_nonce: String(escrowNonce),
  payer: base58(payerBytes),
  payer_token_account: base58(payerTokenAccountBytes),
  amount_usdc: usdc(amountUsdc),
  network: "devnet",
  task,
  parameters,
  request_hash: requestHash,
  deadline: "2026-01-01T00:01:00Z",
};
const executeBody = JSON.stringify(executeRequest);

const output = {
  summary: "A café.",
  words: 5,
  average_word_length: 3.8,
  top_words: [{ word: "café", count: 1 }],
  flagged: false,
  note: null,
};
const outputCanonical = canonicalJson(output);
const resultHash = sha256(utf8(outputCanonical));
/** The v2 result digest's preimage: the escrow's fields, the result hash and the units. */
function resultPreimage({ executionId, nonce, payer, payerTokenAccount, amount, requestHashHex, resultHashBytes, units }) {
  return Buffer.concat([
    utf8(RESULT_DIGEST_DOMAIN),
    executionId,
    agentBytes,
    u64Le(nonce),
    payer,
    payerTokenAccount,
    u64Le(amount),
    Buffer.from(requestHashHex, "hex"),
    resultHashBytes,
    u64Le(units),
  ]);
}
const executeEscrow = {
  executionId: executionIdBytes,
  nonce: escrowNonce,
  payer: payerBytes,
  payerTokenAccount: payerTokenAccountBytes,
  amount: amountUsdc,
  requestHashHex: requestHash,
  resultHashBytes: resultHash,
};
// A fixed-price answer carries no units and signs 0.
const digestPreimage = resultPreimage({ ...executeEscrow, units: 0n });
const digest = sha256(digestPreimage);
const resultSignature = hex(ed25519Sign(creatorSeed, digest));
// A metered answer signs the units it reports.
const meteredUnits = 18_446_744_073_709_551_615n; // u64::MAX: every byte of the field set
const meteredPreimage = resultPreimage({ ...executeEscrow, units: meteredUnits });
const meteredDigest = sha256(meteredPreimage);

/** An item of a /sign-batch request: an execution of the agent and the creator's signature of it. */
function signBatchItem(escrow) {
  const itemDigest = sha256(resultPreimage(escrow));
  return {
    item: {
      execution_id: formatExecutionId(escrow.executionId),
      escrow_nonce: String(escrow.nonce),
      payer: base58(escrow.payer),
      payer_token_account: base58(escrow.payerTokenAccount),
      amount_usdc: usdc(escrow.amount),
      request_hash: escrow.requestHashHex,
      result_hash: hex(escrow.resultHashBytes),
      units: String(escrow.units),
      signature: hex(ed25519Sign(creatorSeed, itemDigest)),
    },
    result_digest: hex(itemDigest),
  };
}

// The execute example, then two more executions of the same agent.
// The third opens the first's execution id again (another escrow, another nonce): its signature
// differs, so neither settles the other.
const batchItems = [
  signBatchItem({ ...executeEscrow, units: 0n }),
  signBatchItem({
    executionId: leadingZeros,
    nonce: 0n,
    payer: agentBytes,
    payerTokenAccount: counting(0x10, 32),
    amount: 1n,
    requestHashHex: hex(counting(0x60, 32)),
    resultHashBytes: counting(0x80, 32),
    units: 7n,
  }),
  signBatchItem({ ...executeEscrow, nonce: escrowNonce + 1n, amount: 100_000_000_000_000n, resultHashBytes: sha256(utf8("{}")), units: 0n }),
];
const batchCount = Buffer.alloc(4);
batchCount.writeUInt32LE(batchItems.length);
const batchPreimage = Buffer.concat([
  utf8(BATCH_DIGEST_DOMAIN),
  agentBytes,
  batchCount,
  ...batchItems.map((i) => Buffer.from(i.result_digest, "hex")),
]);
const batchDigest = sha256(batchPreimage);
const signBatchRequest = { agent: base58(agentBytes), items: batchItems.map((i) => i.item) };

const listing = {
  name: "Text statistics",
  description: "Word, sentence and character counts, reading time and readability of a text.",
  tags: ["text", "statistics", "readability"],
  input_schema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      text: { type: "string", maxLength: 100000 },
      top_n: { type: "integer", minimum: 1, maximum: 50, default: 10 },
    },
    required: ["text"],
    additionalProperties: false,
  },
  output_schema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { words: { type: "integer", minimum: 0 } },
    required: ["words"],
  },
};
const listingCanonical = canonicalJson(listing);

const vectors = {
  about:
    "Test vectors of execute protocol version 2, the marketplace ⇄ creator protocol (docs/execute-protocol.md), written by sdk/program/scripts/gen-protocol-vectors.mjs with node:crypto alone and checked against the library by sdk/program/test/protocol.test.ts. Byte strings are lowercase hex, keys and addresses base58, JSON bodies exact texts.",
  keys: {
    marketplace: { seed: hex(marketplaceSeed), public_key: base58(marketplacePublic) },
    creator: {
      seed: hex(creatorSeed),
      public_key: base58(creatorPublic),
      // Solana's 64-byte secret key form: seed ‖ public key.
      secret_key: hex(Buffer.concat([creatorSeed, creatorPublic])),
    },
  },
  execution_ids: [
    { name: "sample", bytes: hex(executionIdBytes), id: formatExecutionId(executionIdBytes) },
    { name: "all zero", bytes: hex(Buffer.alloc(16)), id: formatExecutionId(Buffer.alloc(16)) },
    { name: "leading zero bytes", bytes: hex(leadingZeros), id: formatExecutionId(leadingZeros) },
    { name: "all ones", bytes: hex(Buffer.alloc(16, 0xff)), id: formatExecutionId(Buffer.alloc(16, 0xff)) },
  ],
  invalid_execution_ids: [
    { name: "no prefix", id: base58(executionIdBytes) },
    { name: "prefix in capitals", id: "EXEC_" + base58(executionIdBytes) },
    { name: "empty after the prefix", id: "exec_" },
    { name: "15 bytes", id: formatExecutionId(counting(0x40, 15)) },
    { name: "17 bytes", id: formatExecutionId(counting(0x40, 17)) },
    { name: "non-canonical: an extra leading 1 (a 17th, zero byte)", id: "exec_1" + base58(executionIdBytes) },
    { name: "not in the base58 alphabet", id: "exec_0OIl" + base58(executionIdBytes).slice(4) },
    { name: "surrounding space", id: ` ${formatExecutionId(executionIdBytes)} ` },
  ],
  request_signing: [
    requestSigningCase("execute", { method: "POST", path: "/execute", body: executeBody, timestamp_secs: timestampSecs }),
    requestSigningCase("prefixed path with a query", {
      method: "POST",
      path: "/agents/text-stats/execute?trace=1",
      body: executeBody,
      timestamp_secs: timestampSecs,
    }),
    requestSigningCase("lowercase method is signed in capitals", {
      method: "post",
      path: "/execute",
      body: executeBody,
      timestamp_secs: timestampSecs,
    }),
    requestSigningCase("empty body", { method: "GET", path: "/health", body: "", timestamp_secs: timestampSecs + 1 }),
  ],
  execute: {
    request: executeRequest,
    body: executeBody,
    request_hash_canonical: requestHashCanonical,
    request_hash: requestHash,
    output,
    output_canonical: outputCanonical,
    result_hash: hex(resultHash),
    digest_preimage: hex(digestPreimage),
    digest: hex(digest),
    response: {
      execution_id: executeRequest.execution_id,
      output,
      result_hash: hex(resultHash),
      signature: resultSignature,
    },
    metered: {
      units: String(meteredUnits),
      digest_preimage: hex(meteredPreimage),
      digest: hex(meteredDigest),
      response: {
        execution_id: executeRequest.execution_id,
        output,
        result_hash: hex(resultHash),
        units: String(meteredUnits),
        signature: hex(ed25519Sign(creatorSeed, meteredDigest)),
      },
    },
  },
  sign_batch: {
    request: signBatchRequest,
    body: JSON.stringify(signBatchRequest),
    result_digests: batchItems.map((i) => i.result_digest),
    digest_preimage: hex(batchPreimage),
    digest: hex(batchDigest),
    response: { digest: hex(batchDigest), signature: hex(ed25519Sign(creatorSeed, batchDigest)) },
  },
  listing: {
    document: listing,
    canonical: listingCanonical,
    listing_hash: hex(sha256(utf8(listingCanonical))),
  },
};

const text = JSON.stringify(vectors, null, 2) + "\n";
if (process.argv.includes("--check")) {
  if (readFileSync(outPath, "utf8") !== text) {
    console.error(`${outPath} is out of date: run node scripts/gen-protocol-vectors.mjs`);
    process.exit(1);
  }
} else {
  writeFileSync(outPath, text);
}
