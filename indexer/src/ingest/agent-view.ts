// An agent's row, rebuilt from its own events (registration, updates, collateral, retirement)
// and the slashes of its disputes.
import type { Commitment } from "./event-row.js";
import type { EventRecord } from "./execution-view.js";

/** Events that change an agent's row. */
export const AGENT_EVENTS = ["AgentRegistered", "AgentUpdated", "CollateralToppedUp", "CollateralWithdrawn", "AgentRetired", "DisputeResolved"];

export interface AgentRow {
  agent: string;
  agent_id: string | null;
  creator: string | null;
  endpoint: string | null;
  pricing: unknown;
  collateral_usdc: string;
  withdrawn_usdc: string;
  registered_at: number | null;
  retired_at: number | null;
  max_slot: number;
  commitment: Commitment;
}

export function agentFromEvents(agent: string, events: readonly EventRecord[]): AgentRow | null {
  if (events.length === 0) return null;
  let collateral = 0n;
  let withdrawn = 0n;
  const row: AgentRow = {
    agent,
    agent_id: null,
    creator: null,
    endpoint: null,
    pricing: null,
    collateral_usdc: "0",
    withdrawn_usdc: "0",
    registered_at: null,
    retired_at: null,
    max_slot: 0,
    commitment: "finalized",
  };
  for (const event of events) {
    const data = event.data;
    row.max_slot = Math.max(row.max_slot, event.slot);
    if (event.commitment === "confirmed") row.commitment = "confirmed";
    switch (event.name) {
      case "AgentRegistered":
        row.agent_id = String(data.agentId);
        row.creator = String(data.creator);
        row.endpoint = String(data.endpoint);
        row.pricing = data.pricing;
        row.registered_at = Number(data.registeredAt);
        collateral = BigInt(String(data.collateralUsdc));
        break;
      case "AgentUpdated":
        row.endpoint = String(data.endpoint);
        row.pricing = data.pricing;
        break;
      case "CollateralToppedUp":
        // the event states the balance after the top-up
        collateral = BigInt(String(data.collateralUsdc));
        break;
      case "CollateralWithdrawn":
        collateral -= BigInt(String(data.amountUsdc));
        withdrawn += BigInt(String(data.amountUsdc));
        break;
      case "AgentRetired":
        row.retired_at = Number(data.retiredAt);
        break;
      case "DisputeResolved":
        collateral -= BigInt(String(data.slashedUsdc));
        break;
      default:
        break;
    }
  }
  row.collateral_usdc = (collateral < 0n ? 0n : collateral).toString();
  row.withdrawn_usdc = withdrawn.toString();
  return row;
}
