// The HTTP application: conventions every route shares (request ids, the one error shape,
// validation with parameter paths, body limits, JSON only), the OpenAPI document built from the
// route schemas, and the routes. Services come in from the caller, so tests and the embedded
// marketplace build the same app over their own database and chain.
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

import cookie from "@fastify/cookie";
import swagger from "@fastify/swagger";
import { utils } from "@coral-xyz/anchor";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from "fastify";

import type { Services } from "./app-services.js";
import { isDatabaseError } from "./db/errors.js";
import { ApiError, errorBody } from "./errors.js";
import { requireJsonWithCookie } from "./http/auth.js";
import { refuseCredentialInQuery } from "./http/credential-in-query.js";
import { registerRateLimits } from "./http/rate-limit.js";
import { registerRoutes } from "./routes/index.js";


const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// Bodies are validated as sent (a number is not a string); query strings and path parameters
// arrive as text, so those are coerced to the declared types.
function validators() {
  const options = { allErrors: false, strict: false, useDefaults: true, removeAdditional: false } as const;
  const body = addFormats(new Ajv2020({ ...options, coerceTypes: false }));
  const text = addFormats(new Ajv2020({ ...options, coerceTypes: "array" }));
  return { body, text };
}

/** `/tags/0/name` → `tags[0].name`. */
export function paramPath(instancePath: string, missing?: string): string {
  const segments = instancePath.split("/").slice(1);
  if (missing !== undefined) segments.push(missing);
  return segments
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((path, segment) => (/^[0-9]+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment), "");
}

function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseError(error)) return new ApiError("database_unavailable");
  if (error.validation && error.validation.length > 0) {
    const first = error.validation[0]!;
    const missing = first.keyword === "required" ? String((first.params as { missingProperty?: string }).missingProperty) : undefined;
    const param = paramPath(first.instancePath, missing);
    const where = error.validationContext === "body" ? "" : `${error.validationContext ?? "request"} `;
    const message = missing !== undefined ? `${where}${param} is required.` : `${where}${param || "body"} ${first.message ?? "is invalid"}.`;
    return new ApiError("validation_failed", message, param || undefined);
  }
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("body_too_large");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError("unsupported_media_type");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("invalid_json", `The body is not valid JSON: ${error.message}`);
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new ApiError("invalid_json", `The body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode === 413) return new ApiError("body_too_large");
  if (error.statusCode === 415) return new ApiError("unsupported_media_type");
  return new ApiError("internal_error");
}

export async function buildApp(services: Services, logger: FastifyServerOptions["logger"] = false): Promise<FastifyInstance> {
  const { config } = services;
  const { body, text } = validators();
  const app = Fastify({
    logger,
    bodyLimit: config.body_limit_bytes,
    genReqId: () => `req_${utils.bytes.bs58.encode(randomBytes(12))}`,
    trustProxy: false,
  });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === "body" ? body : text).compile(schema));

  app.removeContentTypeParser("text/plain");
  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Agent Market API",
        version: "1.0.0",
        description:
          "Run AI agents over REST and pay per call in USDC through on-chain escrow on Solana. " +
          "Every error has the shape {\"error\":{type,code,message,param?,request_id}}; amounts are USDC " +
          "decimal strings with 6 places; timestamps are RFC 3339.",
      },
      servers: [{ url: config.public_url.origin }],
      components: {
        securitySchemes: {
          apiKey: { type: "http", scheme: "bearer", description: "svc_test_… (devnet) or svc_live_… (mainnet)" },
          session: { type: "http", scheme: "bearer", description: "sess_… from POST /v1/auth/session (or its cookie)" },
        },
      },
    },
  });

  // Closing the server ends idle keep-alive connections and waits for requests in flight, but a
  // connection that has not sent a request yet would hold the close until Node's headers timeout
  // (60 s): a stop must not wait on a client that has said nothing.
  const silent = new Set<Socket>();
  app.server.on("connection", (socket: Socket) => {
    silent.add(socket);
    socket.once("close", () => silent.delete(socket));
  });
  app.server.on("request", (request: IncomingMessage) => silent.delete(request.socket));
  app.addHook("preClose", async () => {
    for (const socket of silent) socket.destroy();
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.header("Request-Id", request.id);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, "request failed");
    const retry_after_secs = apiError.details?.retry_after_secs;
    if (typeof retry_after_secs === "number") reply.header("Retry-After", String(retry_after_secs));
    reply.header("Request-Id", request.id).code(apiError.status).send(errorBody(apiError, request.id));
  });
  app.setNotFoundHandler((request, reply) => {
    const apiError = new ApiError("route_not_found", `No endpoint ${request.method} ${request.url.split("?")[0]}.`);
    reply.code(404).send(errorBody(apiError, request.id));
  });

  // Security (see http/credential-in-query.ts and http/rate-limit.ts): before the routes, which
  // the limits attach to as they are declared.
  app.addHook("onRequest", refuseCredentialInQuery);
  // Every route, present and future: app-wide hooks run before a route's own.
  app.addHook("onRequest", requireJsonWithCookie);
  await registerRateLimits(app, config);

  registerRoutes(app, services);
  return app;
}
