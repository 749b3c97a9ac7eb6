// The PostgreSQL server the kit's tests use: a real one (trust auth on 127.0.0.1:5432 by default).
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A database URL on the same server, named for one test run. */
export function databaseUrl(name: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.href;
}
