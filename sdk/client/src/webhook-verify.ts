// Checking a webhook delivery where it arrives: the Standard Webhooks signature (HMAC-SHA256 under
// the endpoint's `whsec_` secret over `${id}.${timestamp}.${body}`) and a recent timestamp, with
// Web Crypto so that it runs in Node, browsers' workers and edge runtimes alike.
import type { Execution } from "./types.js";
import type { WebhookEventType } from "./session-webhooks.js";

/** Accepted distance between the delivery's timestamp and now: older ones may be replays. */
export const WEBHOOK_TOLERANCE_SECS = 300;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export interface WebhookEvent {
  type: WebhookEventType | "webhook.test";
  /** When the event happened (RFC 3339). */
  timestamp: string;
  /** The execution for execution.* events; the dispute for dispute.* events. */
  data: Execution | Record<string, unknown>;
}

export interface VerifyWebhookOptions {
  toleranceSecs?: number;
  /** Unix seconds; the clock by default. */
  nowSecs?: number;
}

/** A header, from a Headers object or a Node-style record, whatever the name's case. */
function header(headers: Headers | Record<string, string | string[] | undefined>, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function base64ToBytes(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function bytesToBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

/** Equal strings, in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The event of a delivery, once its signature verifies under `secret` and its timestamp is recent;
 * throws WebhookVerificationError otherwise. `body` must be the raw body as received, not a parsed
 * and re-serialised one.
 */
export async function verifyWebhook(
  secret: string,
  body: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  const sent_secs = Number(timestamp);
  if (!/^[0-9]+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not Unix seconds");
  const now_secs = options.nowSecs ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now_secs - sent_secs) > (options.toleranceSecs ?? WEBHOOK_TOLERANCE_SECS)) {
    throw new WebhookVerificationError("webhook-timestamp is too far from now");
  }
  if (!secret.startsWith("whsec_")) throw new TypeError("the secret is the whsec_… value given at the endpoint's creation");
  const key = await crypto.subtle.importKey("raw", base64ToBytes(secret.slice("whsec_".length)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  const expected = bytesToBase64(new Uint8Array(mac));
  // Several space-separated signatures may come (a rotation); one matching is enough.
  const valid = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    return version === "v1" && signature !== undefined && sameText(signature, expected);
  });
  if (!valid) throw new WebhookVerificationError("no signature matches");
  return JSON.parse(body) as WebhookEvent;
}
