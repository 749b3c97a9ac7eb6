// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 under the
// endpoint's secret over `${id}.${timestamp}.${body}`, sent as `v1,<base64>`. The secret is
// `whsec_` and the base64 of its key bytes, the form receivers' libraries take as it is.
import { createHmac, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";
/** 32 bytes: the HMAC-SHA256 block's worth of key, within the 24–64 the standard asks for. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

/** The headers of one attempt; `timestamp_secs` is when the attempt is made, in Unix seconds. */
export function signedHeaders(secret: string, id: string, timestamp_secs: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  const signature = createHmac("sha256", key).update(`${id}.${timestamp_secs}.${body}`).digest("base64");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp_secs),
    "webhook-signature": `v1,${signature}`,
  };
}
