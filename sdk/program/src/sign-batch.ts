// `POST <endpoint>/sign-batch` (docs/execute-protocol.md, "Batch signatures"): the marketplace
// sends the per-call results of one agent it already verified, the creator answers one signature
// over their batch digest, which `settle_batch` checks instead of one signature per call.
import { PublicKey } from "@solana/web3.js";

import { fromHex, toHex } from "./bytes.js";
import { batchDigest, resultDigest } from "./digest.js";
import { ed25519Verify } from "./ed25519.js";
import { escrowBindingOf, parseDecimalU64, type WireEscrow } from "./protocol.js";

/**
 * One execution of the batch: its escrow as `POST /execute` carried it (the agent is the
 * request's), and what `/execute` answered.
 */
export interface SignBatchItem extends Omit<WireEscrow, "agent"> {
  /** Lowercase hex, 64 characters: the result hash `/execute` answered. */
  result_hash: string;
  /** Decimal string of the u64 units `/execute` answered ("0" when it answered none). */
  units: string;
  /** Lowercase hex, 128 characters: the signature `/execute` answered. */
  signature: string;
}

/** Body of `POST <endpoint>/sign-batch`, marketplace → creator: 1 ‥ MAX_SETTLE_BATCH items. */
export interface SignBatchRequest {
  /** The agent account's address (base58), the same for every item. */
  agent: string;
  items: SignBatchItem[];
}

/** Body of the creator's `200` answer. */
export interface SignBatchResponse {
  /** Lowercase hex of the batch digest of the items' result digests, in the items' order. */
  digest: string;
  /** Lowercase hex of the creator's Ed25519 signature over the digest. */
  signature: string;
}

/** `<endpoint>/sign-batch`, keeping any path the endpoint has, as executeUrl does for /execute. */
export function signBatchUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/sign-batch`;
  return url;
}

/** The v2 result digest an item's signature must verify over; throws a TypeError naming a malformed field. */
export function signBatchItemDigest(agent: string, item: SignBatchItem): Uint8Array {
  const escrow = escrowBindingOf({ ...item, agent });
  if (typeof item.result_hash !== "string" || !/^[0-9a-f]{64}$/.test(item.result_hash)) {
    throw new TypeError(`result_hash is not 64 lowercase hex characters: ${String(item.result_hash)}`);
  }
  const units = parseDecimalU64(item.units);
  if (units === null) throw new TypeError(`units is not the decimal string of a u64: ${String(item.units)}`);
  return resultDigest({ escrow, resultHash: fromHex(item.result_hash), units });
}

/** The batch digest of `request`'s items, computed from their fields alone. */
export function signBatchDigest(request: SignBatchRequest): Uint8Array {
  return batchDigest(
    new PublicKey(request.agent),
    request.items.map((item) => signBatchItemDigest(request.agent, item)),
  );
}

export type SignBatchResponseFailure = "malformed_response" | "digest_mismatch" | "bad_signature";

export type SignBatchResponseCheck =
  | { ok: true; digest: Uint8Array; signature: Uint8Array }
  | { ok: false; reason: SignBatchResponseFailure; message: string };

/**
 * Checks a creator's answer to `request`: its shape, that its digest is the batch digest the
 * caller computes itself, and the signature over that digest by `signing_key` (the agent's
 * registered key), so that what goes to `settle_batch` is what the program will accept.
 */
export function verifySignBatchResponse(
  body: unknown,
  request: SignBatchRequest,
  signing_key: Uint8Array,
): SignBatchResponseCheck {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, reason: "malformed_response", message: "the response body is not a JSON object" };
  }
  const response = body as Record<string, unknown>;
  if (typeof response.digest !== "string" || !/^[0-9a-f]{64}$/.test(response.digest)) {
    return { ok: false, reason: "malformed_response", message: "digest is not 64 lowercase hex characters" };
  }
  if (typeof response.signature !== "string" || !/^[0-9a-f]{128}$/.test(response.signature)) {
    return { ok: false, reason: "malformed_response", message: "signature is not 128 lowercase hex characters" };
  }
  const digest = signBatchDigest(request);
  if (response.digest !== toHex(digest)) {
    return { ok: false, reason: "digest_mismatch", message: "digest is not the batch digest of the items sent" };
  }
  const signature = fromHex(response.signature);
  if (!ed25519Verify(signature, digest, signing_key)) {
    return { ok: false, reason: "bad_signature", message: "signature does not verify against the agent's registered key" };
  }
  return { ok: true, digest, signature };
}
