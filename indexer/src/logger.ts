// JSON lines on stderr: one object per message, with its level and time.
export type Level = "debug" | "info" | "warn" | "error";

export interface Logger {
  log(level: Level, message: string, fields?: Record<string, unknown>): void;
}

export const stderrLogger: Logger = {
  log(level, message, fields = {}) {
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
  },
};

export const silentLogger: Logger = { log() {} };

export function errorFields(err: unknown): Record<string, unknown> {
  return err instanceof Error ? { error: err.message, stack: err.stack } : { error: String(err) };
}
