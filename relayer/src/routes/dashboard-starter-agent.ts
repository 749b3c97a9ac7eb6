// POST /dashboard-starter-agent, on the local marketplace only (DASHBOARD_STARTER_AGENT_URL): the
// listing screen's "Use the starter service". It asks the starter host for a signing key for the
// signed-in wallet's planned agent and answers what the form needs: the endpoint the host serves
// that agent on, the public key, its proof for this agent and wallet, and the starter's schemas.
// The key's secret stays with the host. A wallet gets a key only for itself (the proof names it),
// the same key each time for the same agent, and at most the host's few agents in all.
import type { Services } from "../app-services.js";
import { ApiError } from "../errors.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";
import { address } from "../http/schemas.js";

const HOST_TIMEOUT_MS = 5_000;

/** The host's refusals by its code; anything else it answers is its being unavailable. */
const HOST_REFUSALS: Record<string, "starter_agent_taken" | "starter_agent_limit"> = {
  agent_taken: "starter_agent_taken",
  too_many_agents: "starter_agent_limit",
};

export function registerDashboardStarterAgent(app: RouteApp, services: Services): void {
  const host = services.config.dashboard?.starter_agent;
  if (host === undefined) return;
  app.post(
    "/dashboard-starter-agent",
    {
      schema: {
        hide: true,
        body: { type: "object", required: ["agent"], additionalProperties: false, properties: { agent: address } },
      },
      preHandler: requireSession(services.signIn),
    },
    async (request) => {
      const creator = request.walletSession!.wallet;
      const answer = await fetch(`${host.url}/keys`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${host.token}` },
        body: JSON.stringify({ agent: request.body.agent, creator }),
        signal: AbortSignal.timeout(HOST_TIMEOUT_MS),
      }).catch(() => null);
      const body = (await answer?.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      if (answer === null || body === null) throw new ApiError("starter_agent_unavailable");
      if (answer.status !== 200) {
        const refusal = HOST_REFUSALS[body.error?.code ?? ""];
        if (refusal === undefined) throw new ApiError("starter_agent_unavailable");
        throw new ApiError(refusal, `The starter host refused: ${body.error?.message ?? refusal}.`, "agent");
      }
      return { object: "starter_agent", ...body };
    },
  );
}
