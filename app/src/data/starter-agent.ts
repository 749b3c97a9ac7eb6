// On the local marketplace, the starter host serves a newcomer's agent before they have a service
// of their own: the relayer (POST /dashboard-starter-agent) asks it for a signing key for the agent
// this page will register, proven for this wallet. The key's secret stays with the host.
import type { WalletSession } from "@agent-market/client";

import { postDashboardRoute } from "./dashboard-route.js";

export interface StarterAgent {
  agent: string;
  /** The host's endpoint for this agent alone. */
  endpoint: string;
  signing_key: string;
  /** The key's signature over this agent and wallet, which register_agent checks. */
  key_proof: string;
  input_schema: Record<string, unknown>;
  output_schema: Record<string, unknown>;
}

export function setUpStarterAgent(session: WalletSession, agent: string): Promise<StarterAgent> {
  return postDashboardRoute<StarterAgent>(session, "/dashboard-starter-agent", { agent });
}
