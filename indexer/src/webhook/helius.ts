// Helius webhooks of the raw type: each delivery is a JSON array of transactions in the shape of
// getTransaction's "json" encoding. Helius echoes the webhook's authHeader in `Authorization`;
// a delivery without the exact value is refused, compared in constant time. A delivery only says
// where to look: the transactions it names are read again from the configured RPC, and what that
// node answers goes into the same ingestion path as the other sources, so a leaked secret or a
// compromised relay can add nothing the chain does not hold. A signature the node does not have
// yet is left to the gap check (Helius retries, so duplicates are expected too).
import { createHash, timingSafeEqual } from "node:crypto";

import { transactionDecoder, type RawTransaction } from "../ingest/decoder.js";
import type { SolanaRpc } from "../ingest/rpc.js";
import type { EventStore } from "../ingest/store.js";

export const WEBHOOK_PATH = "/webhooks/helius";
export const MAX_WEBHOOK_BYTES = 8 * 1024 * 1024;

/** Equal lengths are what timingSafeEqual needs, and hashing gives them without leaking the length. */
export function authorizationMatches(received: string | null, expected: string): boolean {
  if (received === null) return false;
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(received), digest(expected));
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function error(status: number, code: string, message: string): Response {
  return json(status, { error: { code, message } });
}

/** At most this many transactions per delivery: each one is a read from the RPC. */
export const MAX_WEBHOOK_TRANSACTIONS = 1000;

const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

function isRawTransaction(value: unknown): value is RawTransaction {
  const tx = value as RawTransaction;
  return (
    typeof tx === "object" &&
    tx !== null &&
    typeof tx.slot === "number" &&
    Array.isArray(tx.transaction?.signatures) &&
    typeof tx.transaction.signatures[0] === "string" &&
    SIGNATURE.test(tx.transaction.signatures[0]) &&
    Array.isArray(tx.transaction.message?.accountKeys) &&
    Array.isArray(tx.transaction.message?.instructions) &&
    "meta" in tx
  );
}

export interface WebhookTarget {
  store: EventStore;
  /** The configured RPC, which every delivered signature is read from again. */
  rpc: SolanaRpc;
}

export async function handleHeliusWebhook(request: Request, target: WebhookTarget, expectedAuthorization: string | undefined): Promise<Response> {
  if (!expectedAuthorization) return error(404, "not_found", "webhooks are not configured");
  if (request.method !== "POST") return error(405, "method_not_allowed", "POST only");
  if (!authorizationMatches(request.headers.get("authorization"), expectedAuthorization)) return error(401, "unauthorized", "Authorization does not match the webhook's");
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > MAX_WEBHOOK_BYTES) return error(413, "payload_too_large", `at most ${MAX_WEBHOOK_BYTES} bytes`);
  let body: unknown;
  try {
    const text = await request.text();
    if (text.length > MAX_WEBHOOK_BYTES) return error(413, "payload_too_large", `at most ${MAX_WEBHOOK_BYTES} bytes`);
    body = JSON.parse(text);
  } catch {
    return error(400, "invalid_json", "the body is not JSON");
  }
  const items = Array.isArray(body) ? body : [body];
  if (!items.every(isRawTransaction)) return error(400, "invalid_payload", "expected an array of raw transactions");
  if (items.length > MAX_WEBHOOK_TRANSACTIONS) return error(413, "payload_too_large", `at most ${MAX_WEBHOOK_TRANSACTIONS} transactions per delivery`);
  const signatures = [...new Set(items.map((tx) => tx.transaction.signatures[0]!))];
  const read = await target.rpc.getTransactions(signatures, "confirmed");
  const found = read.flatMap((raw) => (raw ? [raw] : []));
  const result = await target.store.ingest(found.map(transactionDecoder(target.store.programId)), "confirmed");
  return json(200, { received: items.length, read: found.length, stored_events: result.events });
}
