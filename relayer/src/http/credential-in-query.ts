// Credentials belong in the Authorization header. One in the URL is kept by proxies, browser
// history and access logs, so it is refused (before anything else reads it) rather than
// accepted, and the caller is told to revoke it.
import type { FastifyRequest } from "fastify";

import { SESSION_TOKEN_PREFIX } from "../auth/sign-in.js";
import { ApiError } from "../errors.js";

/** Parameter names that carry credentials by convention, whatever their value. */
const CREDENTIAL_NAMES = new Set(["api_key", "apikey", "access_token", "token", "session", "authorization"]);
// An API key's prefix is distinctive anywhere; a session token's ("sess_") only as a whole token,
// so a search for "assess_risk" passes.
const CREDENTIAL_VALUE = new RegExp(`svc_(?:test|live)_|(?:^|[^A-Za-z0-9])${SESSION_TOKEN_PREFIX}[1-9A-HJ-NP-Za-km-z]{16,}`);

/** An onRequest hook: 400 credential_in_query when the query string carries an API key or a session token. */
export async function refuseCredentialInQuery(request: FastifyRequest): Promise<void> {
  const at = request.url.indexOf("?");
  if (at === -1) return;
  for (const [name, value] of new URLSearchParams(request.url.slice(at + 1))) {
    if (CREDENTIAL_NAMES.has(name.toLowerCase()) || CREDENTIAL_VALUE.test(value)) {
      throw new ApiError("credential_in_query", undefined, name);
    }
  }
}
