// Who is calling: a wallet session (dashboard cookie or `Bearer sess_…`) for everything that
// manages keys, listings and wallet settings; an API key (`Bearer svc_…`) or a wallet session for
// executions (a session's runs are charged through its wallet's web-run key). An API key is
// refused on session routes, so a leaked key cannot mint or revoke keys.
import type { FastifyReply, FastifyRequest } from "fastify";

import type { ApiKeyAuthenticator, AuthenticatedKey } from "../auth/api-keys.js";
import { SESSION_TOKEN_PREFIX, type Session, type SignInService } from "../auth/sign-in.js";
import { ApiError } from "../errors.js";

export const SESSION_COOKIE = "am_session";

declare module "fastify" {
  interface FastifyRequest {
    walletSession?: Session;
    apiKey?: AuthenticatedKey;
  }
}

/** The credential of `Authorization: Bearer <credential>`, undefined without the header. */
export function bearerCredential(request: FastifyRequest): string | undefined {
  const header: unknown = request.headers.authorization;
  if (header === undefined) return undefined;
  if (typeof header !== "string") throw new ApiError("malformed_authorization");
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(header);
  if (!match) throw new ApiError("malformed_authorization");
  return match[1];
}

export function requireSession(signIn: SignInService) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const credential = bearerCredential(request);
    if (credential?.startsWith("svc_")) throw new ApiError("api_key_not_allowed");
    if (credential !== undefined && !credential.startsWith(SESSION_TOKEN_PREFIX)) throw new ApiError("invalid_session");
    const token = credential ?? request.cookies[SESSION_COOKIE];
    if (!token) throw new ApiError("session_required");
    request.walletSession = await signIn.session(token);
  };
}

export function requireApiKey(authenticator: ApiKeyAuthenticator) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const credential = bearerCredential(request);
    if (credential === undefined) throw new ApiError("missing_authorization");
    if (credential.startsWith(SESSION_TOKEN_PREFIX)) throw new ApiError("api_key_required");
    request.apiKey = await authenticator.verify(credential);
  };
}

/**
 * An API key or a wallet session, for the execution routes. A session here is the wallet itself
 * paying: the route charges it through the wallet's web-run key (auth/web-run-keys.ts).
 */
export function requireApiKeyOrSession(authenticator: ApiKeyAuthenticator, signIn: SignInService) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const credential = bearerCredential(request);
    const cookie = credential === undefined ? request.cookies[SESSION_COOKIE] : undefined;
    if (credential?.startsWith(SESSION_TOKEN_PREFIX) || cookie) {
      request.walletSession = await signIn.session((credential ?? cookie)!);
      return;
    }
    if (credential === undefined) throw new ApiError("missing_authorization");
    request.apiKey = await authenticator.verify(credential);
  };
}

/** Methods that change state; GET, HEAD and OPTIONS never do here. */
const STATE_CHANGING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The cross-site request check, an app-wide hook so that every state-changing route has it,
 * whatever it does and whether it takes a body or not. The cookie is SameSite=Strict, so a
 * browser does not attach it to a request from another site; besides, a state-changing request
 * it authenticates must declare `Content-Type: application/json`: a form on any other origin,
 * even a same-site one (a sibling subdomain), can send only form encodings or text/plain, and a
 * script there can send JSON only after a CORS preflight this relayer never grants. Runs before
 * the route's own hooks and before the body is read. Requests carrying `Authorization` are not
 * concerned: a browser never adds that header by itself.
 */
export async function requireJsonWithCookie(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!STATE_CHANGING_METHODS.has(request.method)) return;
  if (request.headers.authorization !== undefined || !request.cookies[SESSION_COOKIE]) return;
  const mediaType = String(request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (mediaType !== "application/json") throw new ApiError("cookie_request_not_json");
}
