// Errors of work no request waits on (timers, jobs, handovers, a service's loops): logged loudly
// at error level on stderr, and never thrown to the event loop, where they would end the process.
// A failing statement fails its step; the step is tried again by its loop.
import { createLogger, type Logger } from "./logger.js";

const processLogger: Logger = createLogger("info");

export function reportBackgroundError(where: string, error: unknown, details: Record<string, unknown> = {}): void {
  processLogger.error({ where, ...details, err: error }, `background step failed: ${where}`);
}

/**
 * Makes a rejection nobody handled a loud log line rather than the end of the process (Node's
 * default). Every known loop catches its own errors; one that reaches here is a bug to fix. An
 * uncaught exception leaves the process in an unknown state: logged, then the process exits, and
 * what it had in flight is picked up from its rows by the next start.
 */
export function installProcessHandlers(): void {
  process.on("unhandledRejection", (reason) => reportBackgroundError("unhandled rejection", reason));
  process.on("uncaughtException", (error) => {
    reportBackgroundError("uncaught exception", error);
    process.exit(1);
  });
}
