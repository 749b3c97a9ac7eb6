// Structured JSON logs (pino, through fastify). Credentials never reach them: request headers
// are not logged at all, and the paths below are censored wherever they appear.
import type { FastifyServerOptions } from "fastify";

export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions["logger"] {
  return {
    level,
    redact: { paths: ["req.headers.authorization", "req.headers.cookie", "res.headers['set-cookie']"], censor: "[redacted]" },
    ...(stream ? { stream } : {}),
  };
}
