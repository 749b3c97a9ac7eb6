// Who is calling: a wallet session (dashboard cookie or `Bearer sess_…`) for everything that
// manages keys, listings and wallet settings; an API key (`Bearer svc_…`) for executions. An API
// key is refused on session routes, so a leaked key cannot mint or revoke keys.
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
