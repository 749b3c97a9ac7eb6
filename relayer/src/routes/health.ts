import type { FastifyBaseLogger } from "fastify";

import type { Services } from "../app-services.js";
import type { RouteApp } from "../http/route-app.js";
import { address, network } from "../http/schemas.js";
import { RpcUnavailableError } from "../chain/rpc-client.js";
import { formatSol } from "../sol.js";

/** A check that has not answered by then is reported unavailable, so monitors get an answer. */
const CHECK_TIMEOUT_MS = 2_000;

type Check = { status: "ok" } | { status: "unavailable"; message: string };

const check = {
  type: "object",
  required: ["status"],
  properties: { status: { type: "string", enum: ["ok", "unavailable"] }, message: { type: "string" } },
} as const;

const sol = { type: "string", pattern: "^[0-9]+\\.[0-9]{9}$", examples: ["12.500000000"] } as const;

const healthObject = {
  type: "object",
  required: ["object", "status", "database", "queue", "networks"],
  properties: {
    object: { const: "health" },
    status: { type: "string", enum: ["ok", "degraded"] },
    database: check,
    queue: check,
    networks: {
      type: "array",
      items: {
        type: "object",
        required: ["name", "status", "relayer"],
        properties: {
          name: network,
          status: { type: "string", enum: ["ok", "unavailable", "low_balance"] },
          message: { type: "string" },
          relayer: address,
          relayer_balance_sol: sol,
          minimum_balance_sol: sol,
        },
      },
    },
  },
} as const;

class CheckTimeout extends Error {}

function withinTime<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeout(`no answer in ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * What the body says of a failed check. Drivers' messages name hosts, ports, users and
 * databases ("connect ECONNREFUSED 10.0.0.5:5432"): the body gets the error's code at most, and
 * the log the whole error.
 */
function failure(what: string, error: unknown, log: FastifyBaseLogger): string {
  log.warn({ err: error, check: what }, "health check failed");
  if (error instanceof CheckTimeout || error instanceof RpcUnavailableError) return error.message;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[A-Z0-9_]{2,40}$/.test(code) ? `the check failed (${code})` : "the check failed";
}

async function probe(what: string, work: () => Promise<unknown>, log: FastifyBaseLogger): Promise<Check> {
  try {
    await withinTime(work());
    return { status: "ok" };
  } catch (error) {
    return { status: "unavailable", message: failure(what, error, log) };
  }
}

/**
 * GET /v1/health: for load balancers and monitors. 200 when the database, the job queue and every
 * network's RPC answer and the relayer holds at least RELAYER_MIN_BALANCE_SOL on each; otherwise
 * 503 with the same body, naming what is wrong. A relayer out of SOL cannot open escrows, and this
 * is how an operator hears of it before calls fail.
 */
export function registerHealth(app: RouteApp, services: Services): void {
  app.get(
    "/v1/health",
    {
      schema: {
        summary: "Health of the relayer and what it depends on",
        description:
          "The database, the job queue, each network's RPC and the relayer's SOL balance there (it pays every fee and " +
          "the rent of escrows and receipts). 200 when all are well; 503, with the same body, when any is not.",
        tags: ["marketplace"],
        response: { 200: healthObject, 503: healthObject },
      },
    },
    async (request, reply) => {
      const minimum = services.config.relayer_min_balance_lamports;
      const [database, queue, networks] = await Promise.all([
        probe("database", () => services.db.query("SELECT 1"), request.log),
        probe("queue", () => services.jobs.ping(), request.log),
        Promise.all(
          services.chain.networks.map(async (name) => {
            const relayer = services.config.networks[name]!.relayer_keypair.publicKey;
            const base = { name, relayer: relayer.toBase58(), minimum_balance_sol: formatSol(minimum) };
            try {
              const [account] = await withinTime(services.chain.rpc(name).getMultipleAccounts([relayer], "confirmed"));
              // A key that was never funded has no account: it holds nothing.
              const lamports = account ? BigInt(account.lamports) : 0n;
              return { ...base, status: lamports < minimum ? ("low_balance" as const) : ("ok" as const), relayer_balance_sol: formatSol(lamports) };
            } catch (error) {
              return { ...base, status: "unavailable" as const, message: failure(`${name} RPC`, error, request.log) };
            }
          }),
        ),
      ]);
      const healthy = database.status === "ok" && queue.status === "ok" && networks.every((n) => n.status === "ok");
      return reply.code(healthy ? 200 : 503).send({ object: "health", status: healthy ? "ok" : "degraded", database, queue, networks });
    },
  );
}
