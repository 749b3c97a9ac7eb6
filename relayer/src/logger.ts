// The HTTP server's logs: the service kit's format (@agent-market/service), which fastify's own
// pino writes, with what HTTP adds. Credentials never reach them: request headers
// are not logged at all, the paths below are censored wherever they appear, and a request's
// query string is replaced by "?[redacted]" (search words are the caller's business, and a
// credential pasted into a URL must not be kept).
import { logOptions } from "@agent-market/service";
import type { FastifyRequest, FastifyServerOptions } from "fastify";

/** `url` without its query string, which is marked "[redacted]" when there was one. */
export function redactQuery(url: string): string {
  const at = url.indexOf("?");
  return at === -1 ? url : `${url.slice(0, at)}?[redacted]`;
}

export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions["logger"] {
  return {
    ...logOptions(level),
    redact: { paths: ["req.headers.authorization", "req.headers.cookie", "res.headers['set-cookie']"], censor: "[redacted]" },
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: redactQuery(request.url),
        host: request.host,
        remoteAddress: request.ip,
      }),
    },
    ...(stream ? { stream } : {}),
  };
}
