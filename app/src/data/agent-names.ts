// Agents' listed names from the relayer. A page shows the same few agents many times (rows, a
// filter's choices): each listing is asked for once per page load.
import { getAgent } from "./agents.js";

const names = new Map<string, Promise<string | null>>();

/** The agent's listed name; null for an agent never listed here (or while the relayer cannot say). */
export function agentName(address: string): Promise<string | null> {
  let name = names.get(address);
  if (name === undefined) {
    name = getAgent(address).then(
      (agent) => agent.name,
      () => null,
    );
    names.set(address, name);
  }
  return name;
}
