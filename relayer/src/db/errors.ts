// Telling a database failure from the others: a statement PostgreSQL refused, or a connection
// that broke or could not be made. The API answers these `database_unavailable`, never as a
// chain failure.
const CONNECTION_FAILURE = new RegExp(
  [
    "Connection terminated",
    "connection timeout",
    "ECONNREFUSED",
    "ECONNRESET",
    "terminating connection",
    "Client has encountered a connection error",
    "Client was closed",
    "the database system is (starting|shutting) ",
  ].join("|"),
  "i",
);

export function isDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // pg's DatabaseError carries the server's SQLSTATE (five characters) and its severity.
  const { code, severity } = error as Error & { code?: unknown; severity?: unknown };
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && typeof severity === "string") return true;
  return CONNECTION_FAILURE.test(error.message);
}
