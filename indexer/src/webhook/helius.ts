// Helius webhooks of the raw type: each delivery is a JSON array of transactions in the shape of
// getTransaction's "json" encoding. Helius echoes the webhook's authHeader in `Authorization`;
// a delivery without the exact value is refused, compared in constant time. Deliveries go into
// the same ingestion path as the other sources (Helius retries, so duplicates are expected).
import { createHash, timingSafeEqual } from "node:crypto";

import { transactionDecoder, type RawTransaction } from "../ingest/decoder.js";
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

function isRawTransaction(value: unknown): value is RawTransaction {
  const tx = value as RawTransaction;
  return (
    typeof tx === "object" &&
    tx !== null &&
    typeof tx.slot === "number" &&
    Array.isArray(tx.transaction?.signatures) &&
    typeof tx.transaction.signatures[0] === "string" &&
    Array.isArray(tx.transaction.message?.accountKeys) &&
    Array.isArray(tx.transaction.message?.instructions) &&
    "meta" in tx
  );
}

export async function handleHeliusWebhook(request: Request, store: EventStore, expectedAuthorization: string | undefined): Promise<Response> {
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
  const result = await store.ingest(items.map(transactionDecoder(store.programId)), "confirmed");
  return json(200, { received: items.length, stored_events: result.events });
}
