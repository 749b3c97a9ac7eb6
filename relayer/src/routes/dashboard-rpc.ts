// POST /dashboard-rpc, on localnet only (DASHBOARD_LOCALNET): the local chain's JSON-RPC relayed
// for the dashboard on the relayer's origin, the one address sure to reach the page (a local node
// listens on the loopback of the machine running it, which is not always the browser's). The
// browser sends the local test wallet's transactions and checks receipts on chain through it.
// Only the read and send methods those need pass; a hosted RPC is never exposed this way (the page
// calls DASHBOARD_<NETWORK>_RPC_URL itself).
import type { Services } from "../app-services.js";
import { ApiError } from "../errors.js";
import type { RouteApp } from "../http/route-app.js";

const ALLOWED = new Set([
  "getAccountInfo",
  "getMultipleAccounts",
  "getTransaction",
  "getSignatureStatuses",
  "getLatestBlockhash",
  "getBlockHeight",
  "getSlot",
  "getTokenAccountBalance",
  "getBalance",
  "sendTransaction",
]);

export function registerDashboardRpc(app: RouteApp, services: Services): void {
  const rpcUrl = services.config.dashboard?.localnet ? services.config.networks.devnet?.rpc_url : undefined;
  if (rpcUrl === undefined) return;
  app.post("/dashboard-rpc", { schema: { hide: true } }, async (request, reply) => {
    const calls = Array.isArray(request.body) ? request.body : [request.body];
    for (const call of calls) {
      const method = (call as { method?: unknown } | null)?.method;
      if (typeof method !== "string" || !ALLOWED.has(method)) {
        throw new ApiError("validation_failed", `The dashboard's RPC relays ${[...ALLOWED].join(", ")} only.`, "method");
      }
    }
    const answer = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request.body) }).catch(() => null);
    if (answer === null) throw new ApiError("chain_unavailable");
    return reply.code(answer.status).header("content-type", "application/json").send(await answer.text());
  });
}
