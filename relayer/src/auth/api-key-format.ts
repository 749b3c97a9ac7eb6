// API key format: `svc_test_` or `svc_live_`, 30 base62 characters of randomness (178 bits),
// then 6 base62 characters of CRC-32 over everything before them. The checksum lets a secret
// scanner or the relayer tell a well-formed key from a typo offline, before any lookup. Keys are
// stored only as HMAC-SHA-256 under a server secret, so a database leak reveals no usable key.
import { createHmac, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

export type KeyEnvironment = "test" | "live";

export const KEY_PREFIXES = { test: "svc_test_", live: "svc_live_" } as const satisfies Record<KeyEnvironment, string>;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;
const KEY_PATTERN = /^svc_(test|live)_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/;

function checksum(text: string): string {
  let value = crc32(text);
  let out = "";
  for (let i = 0; i < CHECKSUM_CHARS; i += 1) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: rejecting the rest keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(environment: KeyEnvironment): { secret: string; last4: string } {
  const body = KEY_PREFIXES[environment] + randomBase62(RANDOM_CHARS);
  const secret = body + checksum(body);
  return { secret, last4: secret.slice(-4) };
}

/** The key's environment if it is well formed (prefix, length, alphabet, checksum), else null. */
export function parseApiKey(secret: string): KeyEnvironment | null {
  const match = KEY_PATTERN.exec(secret);
  if (!match) return null;
  const body = secret.slice(0, secret.length - CHECKSUM_CHARS);
  return checksum(body) === match[3] ? (match[1] as KeyEnvironment) : null;
}

export function hashApiKey(secret: string, hashSecret: Buffer): Buffer {
  return createHmac("sha256", hashSecret).update(secret).digest();
}
