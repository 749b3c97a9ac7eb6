// Rate limits on what anyone can call without a key (sign-in, discovery, health, the API's
// documents), on listing writes, each of which costs the relayer chain reads and a probe of the
// creator's endpoint, and on dispute reads, each of which may cost a chain read. Counted per
// client address and, where a wallet is known, per wallet too, so neither many addresses nor
// many wallets get around them. Executions by API key have no limit: each is paid for, and the
// wallet's USDC bounds them.
//
// The counts live in memory, or in Redis when REDIS_URL is set, so every relayer of a
// deployment (one QUEUE_NAME) counts together. If Redis does not answer, requests pass: a limit
// must not take the API down with it.
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import { Redis } from "ioredis";

import type { RelayerConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { redisOptions } from "../redis-options.js";

const WINDOW_MS = 60_000;
const REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** Addresses and wallets counted at once in memory; the least recently seen are forgotten first. */
const LOCAL_ENTRIES = 50_000;

/** Routes anyone may call, as "METHOD url". */
const ANONYMOUS = new Set([
  "GET /v1/marketplace",
  "GET /v1/health",
  "POST /v1/auth/nonce",
  "POST /v1/auth/session",
  "GET /v1/agents",
  "GET /v1/agents/:agent_id",
  "GET /v1/openapi.json",
  "GET /v1/reference",
]);

/**
 * Routes that write a listing (each runs the listing checks), as "METHOD url", and the
 * conformance probe, which costs the same probe and is counted with them.
 */
const LISTING_WRITES = new Set([
  "POST /v1/agents",
  "POST /v1/agents/conformance",
  "PATCH /v1/agents/:agent_id",
  "POST /v1/agents/:agent_id/pause",
  "POST /v1/agents/:agent_id/resume",
  "POST /v1/agents/:agent_id/retire",
]);

/**
 * Routes that store dispute evidence (up to 8 MiB each, kept for good), as "METHOD url". Counted
 * in onRequest, after the route's own session check and before its body is read.
 */
const DISPUTE_EVIDENCE = new Set(["POST /v1/disputes/evidence"]);

/**
 * Routes that read disputes, as "METHOD url": one may read a Dispute account (or, for a list, scan
 * the caller's), on the RPC quota settlement also spends. Counted per address before the session
 * is checked, and per wallet after.
 */
const DISPUTE_READS = new Set(["GET /v1/disputes/:execution_id", "GET /v1/disputes"]);

/**
 * Routes that write a webhook endpoint or send to one, as "METHOD url": each test send is a request
 * to a URL the caller chose, and deleting and creating endpoints again must not reset what the
 * per-endpoint bound on test sends allows.
 */
const WEBHOOK_WRITES = new Set(["POST /v1/webhooks", "DELETE /v1/webhooks/:webhook_id", "POST /v1/webhooks/:webhook_id/test"]);

type Limiter = (request: FastifyRequest) => Promise<{ isAllowed: true } | { isAllowed: false; isExceeded: boolean; ttlInSeconds: number }>;

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

function enforce(limiter: Limiter, max: number, per: string): Hook {
  return async (request, reply) => {
    const result = await limiter(request);
    if (result.isAllowed || !result.isExceeded) return;
    const retry_after_secs = Math.max(1, result.ttlInSeconds);
    reply.header("retry-after", String(retry_after_secs));
    throw new ApiError("rate_limited", `At most ${max} such requests a minute ${per}; retry in ${retry_after_secs} s.`, undefined, {
      retry_after_secs,
    });
  };
}

function append(route: RouteOptions, hook: "onRequest" | "preHandler", handler: Hook): void {
  const current = route[hook] as Hook | Hook[] | undefined;
  route[hook] = (current === undefined ? [handler] : [current, handler].flat()) as RouteOptions["preHandler"];
}

/** Registers the limits; call before the routes, which they attach to as they are declared. */
export async function registerRateLimits(
  app: FastifyInstance,
  config: Pick<
    RelayerConfig,
    | "redis_url"
    | "queue_name"
    | "rate_limit_anonymous_per_minute"
    | "rate_limit_listing_writes_per_minute"
    | "rate_limit_dispute_evidence_per_minute"
    | "rate_limit_dispute_reads_per_minute"
    | "rate_limit_webhook_writes_per_minute"
  >,
): Promise<void> {
  // A count Redis has not answered within REDIS_COMMAND_TIMEOUT_MS lets the request pass.
  const redis = config.redis_url
    ? new Redis({ ...redisOptions(config.redis_url), commandTimeout: REDIS_COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1 })
    : undefined;
  redis?.on("error", () => undefined);
  await app.register(rateLimit, {
    global: false,
    skipOnError: true,
    cache: LOCAL_ENTRIES,
    ...(redis ? { redis, nameSpace: `${config.queue_name}:rate-limit:` } : {}),
  });
  if (redis) app.addHook("onClose", async () => void redis.disconnect());

  const limiter = (name: string, max: number, key: (request: FastifyRequest) => string | undefined): Limiter => {
    const create = app.createRateLimit({
      max,
      timeWindow: WINDOW_MS,
      keyGenerator: (request) => `${name}:${key(request) ?? ""}`,
      // A request without the key (no wallet yet) is not counted under an empty one.
      allowList: (request) => key(request) === undefined,
    });
    return (request) => create(request) as ReturnType<Limiter>;
  };
  const anonymous = config.rate_limit_anonymous_per_minute;
  const writes = config.rate_limit_listing_writes_per_minute;
  const anonymousByAddress = enforce(limiter("anonymous:address", anonymous, (r) => r.ip), anonymous, "from one address");
  const nonceByWallet = enforce(
    limiter("nonce:wallet", anonymous, (r) => {
      const wallet = (r.body as { wallet?: unknown } | undefined)?.wallet;
      return typeof wallet === "string" ? wallet : undefined;
    }),
    anonymous,
    "for one wallet",
  );
  const writesByAddress = enforce(limiter("listing-writes:address", writes, (r) => r.ip), writes, "from one address");
  const writesByWallet = enforce(
    limiter("listing-writes:wallet", writes, (r) => r.walletSession?.wallet),
    writes,
    "for one wallet",
  );
  const evidence = config.rate_limit_dispute_evidence_per_minute;
  const evidenceByAddress = enforce(limiter("dispute-evidence:address", evidence, (r) => r.ip), evidence, "from one address");
  const evidenceByWallet = enforce(
    limiter("dispute-evidence:wallet", evidence, (r) => r.walletSession?.wallet),
    evidence,
    "for one wallet",
  );
  const reads = config.rate_limit_dispute_reads_per_minute;
  const readsByAddress = enforce(limiter("dispute-reads:address", reads, (r) => r.ip), reads, "from one address");
  const readsByWallet = enforce(limiter("dispute-reads:wallet", reads, (r) => r.walletSession?.wallet), reads, "for one wallet");

  const hooks = config.rate_limit_webhook_writes_per_minute;
  const hooksByAddress = enforce(limiter("webhook-writes:address", hooks, (r) => r.ip), hooks, "from one address");
  const hooksByWallet = enforce(limiter("webhook-writes:wallet", hooks, (r) => r.walletSession?.wallet), hooks, "for one wallet");

  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      const name = `${method === "HEAD" ? "GET" : method} ${route.url}`;
      if (ANONYMOUS.has(name)) {
        append(route, "onRequest", anonymousByAddress);
        if (name === "POST /v1/auth/nonce") append(route, "preHandler", nonceByWallet);
      } else if (LISTING_WRITES.has(name)) {
        append(route, "onRequest", writesByAddress);
        // After the route's own preHandler, which finds the session's wallet.
        append(route, "preHandler", writesByWallet);
      } else if (WEBHOOK_WRITES.has(name)) {
        append(route, "onRequest", hooksByAddress);
        append(route, "preHandler", hooksByWallet);
      } else if (DISPUTE_EVIDENCE.has(name)) {
        append(route, "onRequest", evidenceByAddress);
        append(route, "onRequest", evidenceByWallet);
      } else if (DISPUTE_READS.has(name)) {
        append(route, "onRequest", readsByAddress);
        append(route, "preHandler", readsByWallet);
      }
    }
  });
}
