// Connection options for Redis from REDIS_URL, one reading for every client (BullMQ's queue and
// workers, the rate limiter's store): `rediss://` means TLS, verified against the URL's host
// name, and the URL's user name is an ACL user (Redis 6+), not ignored.
import type { RedisOptions } from "ioredis";

export function redisOptions(redis_url: string): RedisOptions {
  const url = new URL(redis_url);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.pathname.length > 1 ? { db: Number(url.pathname.slice(1)) } : {}),
    ...(url.protocol === "rediss:" ? { tls: { servername: url.hostname } } : {}),
  };
}

/** Why REDIS_URL cannot be used, or null. */
export function redisUrlProblem(redis_url: string): string | null {
  const url = new URL(redis_url);
  if (url.pathname.length > 1 && !/^\/[0-9]{1,2}$/.test(url.pathname)) {
    return `REDIS_URL's path must be a database number (/0 to /99), got "${url.pathname}"`;
  }
  return null;
}
