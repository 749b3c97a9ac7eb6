// Errors of work no request waits on (timers, jobs, handovers): logged loudly, one JSON line on
// stderr, and never thrown to the event loop, where they would end the process. A failing
// statement fails its step; the step is tried again by its loop.
export function reportBackgroundError(where: string, error: unknown, details: Record<string, unknown> = {}): void {
  const err = error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : { message: String(error) };
  process.stderr.write(
    `${JSON.stringify({ level: 50, time: Date.now(), msg: `background step failed: ${where}`, where, ...details, err })}\n`,
  );
}

/**
 * Makes a rejection nobody handled a loud log line rather than the end of the process (Node's
 * default). Every known loop catches its own errors; one that reaches here is a bug to fix. An
 * uncaught exception leaves the process in an unknown state: logged, then the process exits and
 * its executions are finished from their rows by the next relayer.
 */
export function installProcessHandlers(): void {
  process.on("unhandledRejection", (reason) => reportBackgroundError("unhandled rejection", reason));
  process.on("uncaughtException", (error) => {
    reportBackgroundError("uncaught exception", error);
    process.exit(1);
  });
}
