// An agent among a list of choices goes by its listed name. Two agents listed under one name are
// told apart by their short addresses, and one never listed here goes by its short address.
import type { WalletAgent } from "../data/wallet-agents.js";
import { shortId } from "./short-id.js";

export interface AgentChoice {
  address: string;
  label: string;
}

/** The agents as choices, in the order of their labels. */
export function agentChoices(agents: readonly WalletAgent[]): AgentChoice[] {
  const uses = new Map<string, number>();
  for (const { name } of agents) if (name !== null) uses.set(name, (uses.get(name) ?? 0) + 1);
  return agents
    .map(({ address, name }) => ({ address, label: name === null ? shortId(address) : uses.get(name)! > 1 ? `${name} (${shortId(address)})` : name }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

/** The agent's label among `choices`, else its short address (while the choices load). */
export function agentLabel(choices: readonly AgentChoice[], address: string): string {
  return choices.find((choice) => choice.address === address)?.label ?? shortId(address);
}
