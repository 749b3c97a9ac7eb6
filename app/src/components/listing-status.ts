// Why a listing takes no calls, in the words a payer reads on the agent's page: the same sentence
// beside its status and beside the Run button it disables.
import type { Agent } from "@agent-market/client";

const PAUSE_REASONS: Record<NonNullable<Agent["pause_reason"]>, string> = {
  creator: "paused by its creator",
  endpoint_changed: "paused: its on-chain endpoint is not the one its listing probed, until its creator lists it",
  terms_changed: "paused: its on-chain price is not its listing's, until its creator lists the new price",
};

export function listingText(agent: Agent): string {
  return agent.status === "paused" && agent.pause_reason !== null ? PAUSE_REASONS[agent.pause_reason] : agent.status;
}
