// The Idempotency-Key header, as the routes that take one read it.
import { ApiError } from "../errors.js";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key, if any; 400 `invalid_idempotency_key` if malformed. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const header = headers["idempotency-key"];
  if (header !== undefined && (typeof header !== "string" || !IDEMPOTENCY_KEY.test(header))) {
    throw new ApiError("invalid_idempotency_key", undefined, "Idempotency-Key");
  }
  return header;
}
