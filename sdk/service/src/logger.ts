// One log format for every service: pino's JSON lines (numeric `level`, `time` in epoch
// milliseconds, `msg`, an error under `err` with its type, message and stack). The relayer's HTTP
// logs, its background reports and the indexer's logs are all read by the same tools.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

export type { Logger };

/** Levels a service's LOG_LEVEL may name. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** pino's options for `level`, which fastify takes as its `logger` to build the same logger itself. */
export function logOptions(level: string): LoggerOptions {
  return { level };
}

/** A logger writing to `stream` (stderr by default: stdout may carry a command's answer). */
export function createLogger(level: string, stream: DestinationStream = process.stderr): Logger {
  return pino(logOptions(level), stream);
}

export const silentLogger: Logger = pino({ level: "silent" });
