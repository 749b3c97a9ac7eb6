import { useEffect, useState } from "react";

import { getAgent } from "../data/agents.js";
import { shortId } from "./short-id.js";

// A page shows the same few agents many times: each listing is asked for once per page load.
const names = new Map<string, Promise<string | null>>();

function nameOf(address: string): Promise<string | null> {
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


/** An agent by its listed name (its address on hover), or its short address while unlisted. */
export function AgentName({ address }: { address: string }) {
  const [name, setName] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    void nameOf(address).then((n) => current && setName(n));
    return () => {
      current = false;
    };
  }, [address]);
  return (
    <span title={address} className={name === null ? "mono" : undefined} data-testid="agent-name">
      {name ?? shortId(address)}
    </span>
  );
}
