// The relayer's stop, bounded (main.ts runs it; docs/api.md documents it).

/** How long requests in flight (a creator may be working) get to finish after a stop signal. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** The process exits by then after a stop signal, finished or not. */
export const SHUTDOWN_BOUND_MS = 20_000;
