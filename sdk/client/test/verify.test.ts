import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import {
  ed25519PublicKey,
  formatAddress,
  formatExecutionId,
  escrowBindingOf,
  fromHex,
  requestHash,
  resultDigest,
  signResult,
  toHex,
} from "@agent-market/program";
import { PublicKey, type Connection } from "@solana/web3.js";

import type { Execution } from "../src/index.js";
import { verifyReceipt, type ReceiptVerification } from "../src/verify.js";

const creatorSeed = new Uint8Array(32).fill(0x43);
const creatorKey = formatAddress(ed25519PublicKey(creatorSeed));
const request = { task: "summarize", parameters: { text: "Naïve café", top_n: 3 } };

/** A succeeded execution with a genuine receipt: signed by the creator's key with signResult. */
function genuine(): Execution {
  const id = formatExecutionId(randomBytes(16));
  const agent = formatAddress(randomBytes(32));
  const request_hash = toHex(requestHash(request.task, request.parameters));
  const output = { summary: "A café.", words: 2, flagged: false, note: null };
  const escrow = {
    execution_id: id,
    agent,
    escrow_nonce: "12",
    payer: formatAddress(randomBytes(32)),
    payer_token_account: formatAddress(randomBytes(32)),
    amount_usdc: "0.250000",
    request_hash,
  };
  const signed = signResult(creatorSeed, escrow, output, 40n);
  const digest = resultDigest({ escrow: escrowBindingOf(escrow), resultHash: fromHex(signed.result_hash), units: 40n });
  return {
    object: "execution",
    id,
    agent,
    network: "devnet",
    status: "succeeded",
    api_key_id: "key_1",
    // As it arrives over the wire: another key order, same value.
    output: JSON.parse(JSON.stringify({ words: 2, note: null, flagged: false, summary: "A café." })),
    receipt: {
      protocol_version: 2,
      ...escrow,
      result_hash: signed.result_hash,
      units: signed.units!,
      digest: toHex(digest),
      creator_signature: signed.signature,
      creator_public_key: creatorKey,
    },
    charge: {
      amount_usdc: "0.250000",
      charged_usdc: "0.250000",
      held_usdc: "0.250000",
      returned_usdc: "0.000000",
      units: signed.units ?? "0",
      price_per_unit_usdc: null,
      max_units: null,
      creator_share_usdc: "0.247500",
      fee_usdc: "0.002500",
      currency: "USDC",
      covered_by_subscription: false,
    },
    transactions: { escrow: "e", settlement: "s", refund: null, confirmation: "confirmed" },
    failure: null,
    escrow_deadline: null,
    created_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:00:01.000Z",
    durations_ms: { total: 1, escrow: 1, creator: 1, settlement: 1 },
  };
}

const failed = (result: ReceiptVerification) => result.checks.filter((c) => !c.ok).map((c) => c.name).sort();

function flipHex(hex: string): string {
  return (hex[0] === "0" ? "1" : "0") + hex.slice(1);
}

describe("verifyReceipt offline", () => {
  it("passes a genuine receipt, every check named", async () => {
    const result = await verifyReceipt(genuine(), { request, expectedSigningKey: creatorKey });
    assert.deepEqual(failed(result), [], JSON.stringify(result.checks, null, 2));
    assert.equal(result.ok, true);
    assert.deepEqual(
      result.checks.map((c) => c.name),
      ["receipt", "execution_id", "agent", "result_hash", "request_hash", "protocol_version", "digest", "creator_signature", "expected_signing_key"],
    );
  });

  it("leaves the request_hash and expected key checks out when not asked for", async () => {
    const result = await verifyReceipt(genuine());
    assert.equal(result.ok, true);
    assert.ok(!result.checks.some((c) => c.name === "request_hash" || c.name === "expected_signing_key"));
  });

  const tampering: [string, (e: Execution) => void, string[]][] = [
    ["the output", (e) => void ((e.output as Record<string, unknown>).words = 3), ["result_hash"]],
    ["the result hash", (e) => void (e.receipt!.result_hash = flipHex(e.receipt!.result_hash)), ["creator_signature", "digest", "result_hash"]],
    ["the request hash", (e) => void (e.receipt!.request_hash = flipHex(e.receipt!.request_hash)), ["creator_signature", "digest", "request_hash"]],
    ["the digest", (e) => void (e.receipt!.digest = flipHex(e.receipt!.digest)), ["digest"]],
    ["the signature", (e) => void (e.receipt!.creator_signature = flipHex(e.receipt!.creator_signature)), ["creator_signature"]],
    [
      "the signing key",
      (e) => void (e.receipt!.creator_public_key = formatAddress(ed25519PublicKey(new Uint8Array(32).fill(1)))),
      ["creator_signature", "expected_signing_key"],
    ],
    [
      "the receipt's execution id",
      (e) => void (e.receipt!.execution_id = formatExecutionId(randomBytes(16))),
      ["creator_signature", "digest", "execution_id"],
    ],
    ["the receipt's agent", (e) => void (e.receipt!.agent = formatAddress(randomBytes(32))), ["agent", "creator_signature", "digest"]],
    ["the execution's id", (e) => void (e.id = formatExecutionId(randomBytes(16))), ["execution_id"]],
    // The escrow a signature binds: any other escrow of the same id rebuilds another digest.
    ["the escrow's nonce", (e) => void (e.receipt!.escrow_nonce = "13"), ["creator_signature", "digest"]],
    ["the payer", (e) => void (e.receipt!.payer = formatAddress(randomBytes(32))), ["creator_signature", "digest"]],
    ["the payer token account", (e) => void (e.receipt!.payer_token_account = formatAddress(randomBytes(32))), ["creator_signature", "digest"]],
    ["the amount", (e) => void (e.receipt!.amount_usdc = "0.250001"), ["creator_signature", "digest"]],
    ["the units", (e) => void (e.receipt!.units = "41"), ["creator_signature", "digest"]],
    ["the protocol version", (e) => void ((e.receipt as { protocol_version: number }).protocol_version = 1), ["protocol_version"]],
    ["the request sent", () => undefined, ["request_hash"]],
  ];
  for (const [what, tamper, expected] of tampering) {
    it(`fails exactly the checks that ${what} breaks`, async () => {
      const execution = genuine();
      tamper(execution);
      const sent = what === "the request sent" ? { ...request, task: "something else" } : request;
      const result = await verifyReceipt(execution, { request: sent, expectedSigningKey: creatorKey });
      assert.equal(result.ok, false);
      assert.deepEqual(failed(result), expected, JSON.stringify(result.checks, null, 2));
    });
  }

  it("fails without throwing for an execution with no receipt, or malformed fields", async () => {
    const refunded = { ...genuine(), status: "refunded" as const, receipt: null };
    const result = await verifyReceipt(refunded);
    assert.deepEqual(failed(result), ["receipt"]);

    const garbled = genuine();
    garbled.receipt!.creator_signature = "zz";
    garbled.receipt!.creator_public_key = "not a key";
    assert.deepEqual(failed(await verifyReceipt(garbled)), ["creator_signature"]);

    const badNonce = genuine();
    badNonce.receipt!.escrow_nonce = "-1";
    const check = (await verifyReceipt(badNonce)).checks.find((c) => c.name === "digest")!;
    assert.deepEqual(check, { name: "digest", ok: false, detail: "cannot be rebuilt: escrow_nonce is not the decimal string of a u64: -1" });
    const badUnits = genuine();
    badUnits.receipt!.units = "1.5";
    assert.equal(
      (await verifyReceipt(badUnits)).checks.find((c) => c.name === "digest")!.detail,
      "cannot be rebuilt: units is not the decimal string of a u64: 1.5",
    );
  });

  it("reports a settlement the RPC does not have yet as a failed on-chain check", async () => {
    const connection = { getTransaction: async () => null } as unknown as Connection;
    // Any deployment's id: the settlement is not found before the program is looked at.
    const result = await verifyReceipt(genuine(), { connection, programId: new PublicKey(new Uint8Array(32).fill(7)) });
    assert.deepEqual(failed(result), ["settlement_transaction"]);
    assert.match(result.checks.at(-1)!.detail, /not confirmed/);
  });
});
